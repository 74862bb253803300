import pytest

from inventory.stock import Item, OutOfStockError, Stock


def make_stock():
    stock = Stock()
    stock.add(Item(sku="B-2", name="bolt", price=15, quantity=100))
    stock.add(Item(sku="A-1", name="anchor", price=250, quantity=3))
    return stock


def test_add_merges_same_sku():
    stock = make_stock()
    stock.add(Item(sku="A-1", name="anchor", price=250, quantity=2))
    assert [(i.sku, i.quantity) for i in stock.items()] == [("A-1", 5), ("B-2", 100)]


def test_take_reduces_quantity():
    stock = make_stock()
    stock.take("B-2", 40)
    assert stock.items()[1].quantity == 60


def test_take_refuses_more_than_on_hand():
    stock = make_stock()
    with pytest.raises(OutOfStockError):
        stock.take("A-1", 4)
    assert stock.items()[0].quantity == 3


def test_total_value_and_low_stock():
    stock = make_stock()
    assert stock.total_value() == 100 * 15 + 3 * 250
    assert [i.sku for i in stock.low_stock(5)] == ["A-1"]
