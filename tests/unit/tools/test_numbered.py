"""numbered: the Read listing, the same text whichever way it is built (the prefix table for
lines 1-1000, numbers formatted beyond it, the clipping path for long lines)."""

from __future__ import annotations

import pytest

from lsp_agent.tools._text import MAX_LINE_CHARS, clip_line, numbered


def _reference(lines: list[str], first: int) -> str:
    return "\n".join(f"{n}\t{clip_line(line)}" for n, line in enumerate(lines, start=first))


LINES = [f"line {i}\twith a tab" if i % 3 else "" for i in range(40)]


@pytest.mark.parametrize("first", [1, 2, 500, 961, 962, 995, 1000, 1001, 5000, 123456])
def test_numbered_matches_the_format(first: int) -> None:
    assert numbered(LINES, first) == _reference(LINES, first)


def test_edge_cases() -> None:
    assert numbered([], 1) == ""
    assert numbered([""], 1) == "1\t"
    assert numbered(["a"], 1000) == "1000\ta"
    assert numbered(["a", "b"], 1000) == "1000\ta\n1001\tb"


def test_long_lines_are_clipped_wherever_they_are() -> None:
    lines = ["short", "x" * (MAX_LINE_CHARS + 5), "end"]
    for first in (1, 999, 2000):
        out = numbered(lines, first)
        assert out == _reference(lines, first)
        assert "[line truncated: 2005 characters]" in out
