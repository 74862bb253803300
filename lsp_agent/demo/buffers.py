"""The demo editor's open documents: text, version, dirty flag, and LSP edits applied to them.

Positions in LSP edits count UTF-16 code units (the demo negotiates ``utf-16``, as VS Code
does); :func:`offset_at` converts one to an index into the Python string.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass


class EditError(ValueError):
    """An edit cannot be applied (position outside the document, overlapping edits)."""


@dataclass(kw_only=True)
class Buffer:
    """One open document. ``version`` is the LSP document version; ``dirty`` means the
    buffer holds text that is not on disk."""

    uri: str
    text: str
    version: int
    language_id: str = "python"
    dirty: bool = False


@dataclass(frozen=True, kw_only=True)
class TextEditSpec:
    """A text edit in LSP coordinates: 0-based lines, UTF-16 ``character`` offsets."""

    start_line: int
    start_character: int
    end_line: int
    end_character: int
    new_text: str


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for index, char in enumerate(text):
        # LSP line breaks: \n, \r\n and a lone \r.
        lone_cr = char == "\r" and (index + 1 == len(text) or text[index + 1] != "\n")
        if char == "\n" or lone_cr:
            starts.append(index + 1)
    return starts


def offset_at(text: str, line: int, character: int) -> int:
    """The string index of LSP position (``line``, ``character`` in UTF-16 units).

    A ``character`` beyond the end of the line clamps to the line end (LSP rule); a line past
    the end of the document maps to the end. Raises :class:`EditError` for negative values.
    """
    if line < 0 or character < 0:
        raise EditError(f"negative position ({line}, {character})")
    starts = _line_starts(text)
    if line >= len(starts):
        return len(text)
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    # The line's content stops before its line break.
    content_end = end
    while content_end > start and text[content_end - 1] in "\r\n":
        content_end -= 1
    units = 0
    index = start
    while index < content_end and units < character:
        units += 2 if ord(text[index]) > 0xFFFF else 1
        index += 1
    return index


def apply_edits(text: str, edits: Iterable[TextEditSpec]) -> str:
    """Apply LSP text edits, all computed against ``text`` (LSP semantics: non-overlapping,
    applied as if simultaneously). Raises :class:`EditError` for overlapping ranges."""
    spans: list[tuple[int, int, str]] = []
    for edit in edits:
        start = offset_at(text, edit.start_line, edit.start_character)
        end = offset_at(text, edit.end_line, edit.end_character)
        if end < start:
            raise EditError(f"edit range ends before it starts: {edit}")
        spans.append((start, end, edit.new_text))
    # Stable sort keeps the given order of inserts at one position (LSP rule).
    spans.sort(key=lambda span: (span[0], span[1]))
    for (_, prev_end, _), (start, _, _) in itertools.pairwise(spans):
        if start < prev_end:
            raise EditError("overlapping text edits")
    out: list[str] = []
    cursor = 0
    for start, end, new_text in spans:
        out.append(text[cursor:start])
        out.append(new_text)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)
