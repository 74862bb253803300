"""The stock ledger: items by SKU with quantities on hand."""

from dataclasses import dataclass


class OutOfStockError(Exception):
    """Raised when more units are taken than are on hand."""


@dataclass
class Item:
    """One stock-keeping unit. ``price`` is in integer cents."""

    sku: str
    name: str
    price: int
    quantity: int = 0

    @property
    def value(self) -> int:
        """Value of the units on hand, in cents."""
        return self.price * self.quantity


class Stock:
    """Items keyed by SKU."""

    def __init__(self) -> None:
        self._items: dict[str, Item] = {}

    def add(self, item: Item) -> None:
        """Add an item, or add its quantity to the item already held under its SKU."""
        held = self._items.get(item.sku)
        if held is None:
            self._items[item.sku] = item
        else:
            held.quantity += item.quantity

    def take(self, sku: str, quantity: int) -> Item:
        """Take ``quantity`` units of ``sku`` out of stock.

        Raises KeyError for an unknown SKU and OutOfStockError when too few are on hand.
        """
        item = self._items[sku]
        if quantity > item.quantity:
            raise OutOfStockError(f"{sku}: {item.quantity} on hand, {quantity} requested")
        item.quantity -= quantity
        return item

    def items(self) -> list[Item]:
        """All items, sorted by SKU."""
        return [self._items[sku] for sku in sorted(self._items)]

    def total_value(self) -> int:
        """Value of everything on hand, in cents."""
        return sum(item.value for item in self._items.values())

    def low_stock(self, threshold: int) -> list[Item]:
        """Items with fewer than ``threshold`` units on hand, sorted by SKU."""
        return [item for item in self.items() if item.quantity < threshold]
