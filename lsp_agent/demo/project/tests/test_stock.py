import unittest

from inventory.stock import Item, OutOfStockError, Stock


def make_stock():
    stock = Stock()
    stock.add(Item(sku="B-2", name="bolt", price=15, quantity=100))
    stock.add(Item(sku="A-1", name="anchor", price=250, quantity=3))
    return stock


class StockTest(unittest.TestCase):
    def test_add_merges_same_sku(self):
        stock = make_stock()
        stock.add(Item(sku="A-1", name="anchor", price=250, quantity=2))
        self.assertEqual([(i.sku, i.quantity) for i in stock.items()], [("A-1", 5), ("B-2", 100)])

    def test_take_reduces_quantity(self):
        stock = make_stock()
        stock.take("B-2", 40)
        self.assertEqual(stock.items()[1].quantity, 60)

    def test_take_refuses_more_than_on_hand(self):
        stock = make_stock()
        with self.assertRaises(OutOfStockError):
            stock.take("A-1", 4)
        self.assertEqual(stock.items()[0].quantity, 3)

    def test_total_value_and_low_stock(self):
        stock = make_stock()
        self.assertEqual(stock.total_value(), 100 * 15 + 3 * 250)
        self.assertEqual([i.sku for i in stock.low_stock(5)], ["A-1"])


if __name__ == "__main__":
    unittest.main()
