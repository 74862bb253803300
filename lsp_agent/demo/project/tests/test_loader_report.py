import unittest

from inventory.loader import load_csv
from inventory.report import render_report

CSV = """sku,name,price,quantity
W-7,washer,0.29,300
N-4,nut,0.57,2
"""


class LoaderReportTest(unittest.TestCase):
    def test_load_csv_values(self):
        stock = load_csv(CSV)
        self.assertEqual(
            [(i.sku, i.price, i.quantity) for i in stock.items()],
            [("N-4", 57, 2), ("W-7", 29, 300)],
        )

    def test_load_csv_names_bad_line(self):
        with self.assertRaisesRegex(ValueError, "line 3"):
            load_csv("sku,name,price,quantity\nA,a,1.00,1\nB,b,oops,1\n")

    def test_report(self):
        report = render_report(
            load_csv("sku,name,price,quantity\nS-1,spring,0.25,8\nC-3,clip,1.50,4\n")
        )
        self.assertEqual(
            report.splitlines(),
            [
                "C-3      clip                 4 x     1.50",
                "S-1      spring               8 x     0.25",
                "total value: 8.00",
                "re-order: C-3",
            ],
        )


if __name__ == "__main__":
    unittest.main()
