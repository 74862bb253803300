"""Load stock from CSV text with the columns ``sku,name,price,quantity``."""

import csv
import io

from inventory.money import parse_price
from inventory.stock import Item, Stock


def load_csv(text: str) -> Stock:
    """Build a Stock from CSV text (a header row, then one item per row).

    Raises ValueError naming the line of the first bad row.
    """
    stock = Stock()
    reader = csv.DictReader(io.StringIO(text))
    for line_no, row in enumerate(reader, start=2):
        try:
            item = Item(
                sku=row["sku"].strip(),
                name=row["name"].strip(),
                price=parse_price(row["price"]),
                quantity=int(row["quantity"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"line {line_no}: {exc}") from exc
        stock.add(item)
    return stock
