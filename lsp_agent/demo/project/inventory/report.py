"""A plain-text stock report."""

from inventory.money import format_cents
from inventory.stock import Stock


def render_report(stock: Stock, *, low_threshold: int = 5) -> str:
    """One line per item, a total line, and the SKUs that need re-ordering."""
    lines = []
    for item in stock.items():
        lines.append(
            f"{item.sku:<8} {item.name:<16} {item.quantity:>5} x {format_cents(item.price):>8}"
        )
    lines.append(f"total value: {format_cents(stock.total_value())}")
    low = [item.sku for item in stock.low_stock(low_threshold)]
    lines.append("re-order: " + (", ".join(low) if low else "nothing"))
    return "\n".join(lines) + "\n"
