"""A tiny stock-keeping library: items, prices in cents, a CSV loader and a report."""

from inventory.loader import load_csv
from inventory.money import format_cents, parse_price
from inventory.report import render_report
from inventory.stock import Item, OutOfStockError, Stock

__all__ = [
    "Item",
    "OutOfStockError",
    "Stock",
    "format_cents",
    "load_csv",
    "parse_price",
    "render_report",
]
