"""model_safe: lone surrogates (from undecodable bytes) become U+FFFD; other text, ASCII or
not, comes back as it was."""

from __future__ import annotations

import pytest

from lsp_agent.tools._files import model_safe


@pytest.mark.parametrize("text", ["", "plain ascii\n\ttab", "é ü → 𝄞 \U0001f600", "\ufffd"])
def test_text_without_lone_surrogates_is_unchanged(text: str) -> None:
    assert model_safe(text) == text


@pytest.mark.parametrize(
    ("text", "safe"),
    [
        ("a\udc80b", "a\ufffdb"),
        ("\ud800", "\ufffd"),
        ("x\udcff\udcfey", "x\ufffd\ufffdy"),
        ("é\udc80", "é\ufffd"),
    ],
)
def test_lone_surrogates_are_replaced(text: str, safe: str) -> None:
    assert model_safe(text) == safe
    model_safe(text).encode("utf-8")  # what JSON needs
