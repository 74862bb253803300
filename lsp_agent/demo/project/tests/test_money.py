import pytest

from inventory.money import format_cents, parse_price


def test_parse_whole_amount():
    assert parse_price("4") == 400


def test_parse_prices_in_cents():
    assert [parse_price(p) for p in ["19.99", "0.29", "4.35", "1.10"]] == [1999, 29, 435, 110]


def test_parse_rejects_garbage():
    with pytest.raises(ValueError):
        parse_price("12.345")
    with pytest.raises(ValueError):
        parse_price("-1")


def test_format_cents():
    assert format_cents(1999) == "19.99"
    assert format_cents(5) == "0.05"
    assert format_cents(-250) == "-2.50"
