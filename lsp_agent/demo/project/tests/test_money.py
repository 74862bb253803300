import unittest

from inventory.money import format_cents, parse_price


class MoneyTest(unittest.TestCase):
    def test_parse_whole_amount(self):
        self.assertEqual(parse_price("4"), 400)

    def test_parse_prices_in_cents(self):
        self.assertEqual(
            [parse_price(p) for p in ["19.99", "0.29", "4.35", "1.10"]], [1999, 29, 435, 110]
        )

    def test_parse_rejects_garbage(self):
        with self.assertRaises(ValueError):
            parse_price("12.345")
        with self.assertRaises(ValueError):
            parse_price("-1")

    def test_format_cents(self):
        self.assertEqual(format_cents(1999), "19.99")
        self.assertEqual(format_cents(5), "0.05")
        self.assertEqual(format_cents(-250), "-2.50")


if __name__ == "__main__":
    unittest.main()
