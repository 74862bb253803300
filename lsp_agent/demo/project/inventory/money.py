"""Money helpers. Prices are kept in integer cents so sums never drift."""

import re

_PRICE = re.compile(r"^\d+(\.\d{1,2})?$")


def parse_price(text: str) -> int:
    """Parse a price such as ``"19.99"`` or ``"4"`` into integer cents (1999, 400).

    Raises ValueError for anything that is not a non-negative amount with at most two
    decimals.
    """
    text = text.strip()
    if not _PRICE.match(text):
        raise ValueError(f"not a price: {text!r}")
    return int(float(text) * 100)


def format_cents(cents: int) -> str:
    """Format integer cents as a price with two decimals: 1999 -> ``"19.99"``."""
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    return f"{sign}{whole}.{frac:02d}"
