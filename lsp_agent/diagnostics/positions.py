"""Converting LSP character offsets between position encodings and Python code points.

LSP positions count characters in a negotiated unit (LSP 3.17 ``PositionEncodingKind``):
``utf-8`` (bytes), ``utf-16`` (code units, the default) or ``utf-32`` (code points, which is
what Python ``str`` indexes). Internally the diagnostics package uses code points; the functions
here convert at the boundary, given the text of the line. Offsets past the end of a line are
clamped to its end; a position in the middle of a multi-unit character snaps to its start.
"""

from __future__ import annotations

from typing import Literal

PositionEncoding = Literal["utf-8", "utf-16", "utf-32"]
"""LSP ``PositionEncodingKind`` values."""


def _width(char: str, encoding: PositionEncoding) -> int:
    code = ord(char)
    if encoding == "utf-32":
        return 1
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    if code < 0x80:
        return 1
    if code < 0x800:
        return 2
    if code < 0x10000:
        return 3
    return 4


def to_code_points(line: str, units: int, encoding: PositionEncoding) -> int:
    """The code-point offset in ``line`` of a character offset of ``units`` in ``encoding``.

    ``line`` excludes its line ending. Negative offsets count as 0; offsets past the end of the
    line give ``len(line)``.
    """
    if units <= 0:
        return 0
    if encoding == "utf-32":
        return min(units, len(line))
    seen = 0
    for index, char in enumerate(line):
        width = _width(char, encoding)
        if seen + width > units:
            return index
        seen += width
    return len(line)


def from_code_points(line: str, offset: int, encoding: PositionEncoding) -> int:
    """The character offset in ``encoding`` of the code-point ``offset`` in ``line`` (clamped
    to ``0..len(line)``)."""
    offset = max(0, min(offset, len(line)))
    if encoding == "utf-32":
        return offset
    return sum(_width(char, encoding) for char in line[:offset])


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their endings (``\\n``, ``\\r\\n`` or ``\\r``, as LSP
    counts lines); a text ending with a line break has an empty last line."""
    lines: list[str] = []
    start = 0
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char in "\r\n":
            lines.append(text[start:index])
            if char == "\r" and index + 1 < length and text[index + 1] == "\n":
                index += 1
            start = index + 1
        index += 1
    lines.append(text[start:])
    return lines
