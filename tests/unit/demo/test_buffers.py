"""The demo editor's text arithmetic: UTF-16 positions and LSP text edits."""

from __future__ import annotations

import pytest

from lsp_agent.demo.buffers import EditError, TextEditSpec, apply_edits, offset_at


def edit(sl: int, sc: int, el: int, ec: int, text: str) -> TextEditSpec:
    return TextEditSpec(
        start_line=sl, start_character=sc, end_line=el, end_character=ec, new_text=text
    )


def test_offsets_count_utf16_units() -> None:
    text = "a😀b\nx"
    assert offset_at(text, 0, 1) == 1
    assert offset_at(text, 0, 3) == 2  # after the emoji: 2 UTF-16 units, 1 code point
    assert offset_at(text, 0, 4) == 3
    assert offset_at(text, 1, 0) == 4


def test_offsets_clamp_and_handle_line_endings() -> None:
    text = "ab\r\ncd\rxy"
    assert offset_at(text, 0, 99) == 2  # clamps before the line break
    assert offset_at(text, 1, 0) == 4
    assert offset_at(text, 2, 1) == 8  # a lone \r ends a line too
    assert offset_at(text, 9, 0) == len(text)
    with pytest.raises(EditError):
        offset_at(text, -1, 0)


def test_apply_edits_is_simultaneous() -> None:
    text = "one\ntwo\nthree\n"
    new = apply_edits(text, [edit(2, 0, 2, 5, "3"), edit(0, 0, 0, 3, "1"), edit(1, 0, 1, 0, "#")])
    assert new == "1\n#two\n3\n"


def test_inserts_at_one_position_keep_their_order() -> None:
    assert apply_edits("x", [edit(0, 0, 0, 0, "a"), edit(0, 0, 0, 0, "b")]) == "abx"


def test_overlapping_edits_are_refused() -> None:
    with pytest.raises(EditError, match="overlapping"):
        apply_edits("abcdef", [edit(0, 0, 0, 4, "x"), edit(0, 2, 0, 5, "y")])


def test_reversed_range_is_refused() -> None:
    with pytest.raises(EditError, match="ends before"):
        apply_edits("abc", [edit(0, 2, 0, 1, "x")])
