"""The door's minimal TextEdit, applied with the test editor's independent arithmetic, turns
the old text into the new one in every position encoding (CRLF, lone CR, non-BMP characters,
form feeds, which LSP does not count as line breaks)."""

from __future__ import annotations

import itertools

import pytest

from lsp_agent.lsp.textedit import minimal_edit, minimal_splice

from .conftest import apply_text_edits

TEXTS = [
    "",
    "a",
    "a\r\nb\r\n",
    "a\r\nb\r\nc",
    "a\rb\rc",
    "x = '😀'\ny = 1\n",
    "x = '😀😀'\r\ny = 2\r\n",
    "page\x0cbreak\nline\u2028sep\n",
    "\r\n",
    "\n\r\n\r",
]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_minimal_edit_round_trips(encoding: str) -> None:
    for old, new in itertools.product(TEXTS, repeat=2):
        edit = minimal_edit(old, new, encoding)
        if old == new:
            assert edit is None
            continue
        assert edit is not None
        assert apply_text_edits(old, [edit], encoding) == new, (old, new)


def test_cut_never_splits_a_crlf() -> None:
    splice = minimal_splice("a\r\nb", "a\r\r\nb")
    assert splice is not None
    assert (splice.start, splice.end, splice.text) == (1, 3, "\r\r\n")
    splice = minimal_splice("a\r\nb", "a\rb")
    assert splice is not None
    assert (splice.start, splice.end, splice.text) == (1, 3, "\r")


def test_positions_count_encoding_units() -> None:
    edit = minimal_edit("😀a\n", "😀b\n", "utf-16")
    assert edit is not None and edit.range.start.character == 2
    edit = minimal_edit("😀a\n", "😀b\n", "utf-8")
    assert edit is not None and edit.range.start.character == 4
    edit = minimal_edit("😀a\n", "😀b\n", "utf-32")
    assert edit is not None and edit.range.start.character == 1
    # A form feed is a character, not a line break, in LSP.
    edit = minimal_edit("a\x0cb\nc", "a\x0cb\nd", "utf-16")
    assert edit is not None and (edit.range.start.line, edit.range.start.character) == (1, 0)
