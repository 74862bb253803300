"""Position conversions between LSP encodings and code points."""

from __future__ import annotations

import pytest

from lsp_agent.diagnostics.positions import from_code_points, split_lines, to_code_points

LINE = "a😀b"  # the emoji is 1 code point, 2 UTF-16 units, 4 UTF-8 bytes


@pytest.mark.parametrize(("encoding", "after_emoji"), [("utf-32", 2), ("utf-16", 3), ("utf-8", 5)])
def test_round_trip_around_a_non_bmp_character(encoding: str, after_emoji: int) -> None:
    assert from_code_points(LINE, 2, encoding) == after_emoji  # type: ignore[arg-type]
    assert to_code_points(LINE, after_emoji, encoding) == 2  # type: ignore[arg-type]


def test_offset_inside_a_character_snaps_to_its_start() -> None:
    assert to_code_points(LINE, 2, "utf-16") == 1
    assert to_code_points(LINE, 3, "utf-8") == 1


def test_offsets_are_clamped_to_the_line() -> None:
    assert to_code_points(LINE, 99, "utf-16") == 3
    assert to_code_points(LINE, -4, "utf-8") == 0
    assert from_code_points(LINE, 99, "utf-16") == 4


def test_split_lines_counts_every_lsp_line_ending() -> None:
    assert split_lines("a\r\nb\nc\rd") == ["a", "b", "c", "d"]
    assert split_lines("x\n") == ["x", ""]
    assert split_lines("") == [""]
