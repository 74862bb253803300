"""Turning a whole-text change into one minimal LSP ``TextEdit``, in the negotiated encoding.

Positions follow the LSP rules, not Python's ``str.splitlines``: lines end at ``\\r\\n``,
``\\r`` or ``\\n`` only (a form feed or U+2028 inside a line is just a character), and
``character`` counts UTF-16 code units, UTF-8 bytes or code points depending on the
``positionEncoding`` negotiated at ``initialize`` (LSP 3.17 "Position"). A non-BMP character
such as an emoji is 2 UTF-16 units, 4 UTF-8 bytes, 1 code point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsprotocol import types

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def units(text: str, encoding: str) -> int:
    """Length of ``text`` in the units of ``encoding`` (``"utf-8"``, ``"utf-16"``,
    ``"utf-32"``; anything else counts as UTF-16, the LSP default)."""
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def position_at(text: str, offset: int, encoding: str) -> types.Position:
    """The LSP position of code-point ``offset`` in ``text`` (``0 <= offset <= len(text)``).

    ``offset`` must not fall between the ``\\r`` and ``\\n`` of a CRLF (no LSP position names
    that spot); :func:`minimal_edit` never asks for one.
    """
    line = 0
    line_start = 0
    for match in _LINE_BREAK.finditer(text, 0, offset):
        if match.end() > offset:
            break
        line += 1
        line_start = match.end()
    return types.Position(line=line, character=units(text[line_start:offset], encoding))


@dataclass(frozen=True, kw_only=True)
class Splice:
    """Replace ``old[start:end]`` by ``text`` (code-point offsets into the old text)."""

    start: int
    end: int
    text: str


def minimal_splice(old: str, new: str) -> Splice | None:
    """The smallest single replacement turning ``old`` into ``new`` (common prefix and suffix
    kept), or ``None`` if they are equal. The cut never falls inside a CRLF pair of either
    text, and an append never starts past the last line break of ``old``."""
    if old == new:
        return None
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    # A cut between "\r" and "\n" has no LSP position: widen the replaced span by one.
    if prefix and (_splits_crlf(old, prefix) or _splits_crlf(new, prefix)):
        prefix -= 1
    if suffix and (_splits_crlf(old, len(old) - suffix) or _splits_crlf(new, len(new) - suffix)):
        suffix -= 1
    return _before_final_break(
        old, Splice(start=prefix, end=len(old) - suffix, text=new[prefix : len(new) - suffix])
    )


def _before_final_break(old: str, splice: Splice) -> Splice:
    """A splice that reaches past the last line break of ``old`` (an append such as
    ``"a\r\n"`` + ``"b\r\n"``, or deleting the last line), shifted to the same change one
    line break earlier (``"\r\nb"`` inserted at the end of the last line; ``"\nb"`` deleted):
    the same result without a position past the last line break, where an editor's buffer has
    no line (Neovim then saves an extra blank line). Other splices are returned unchanged."""
    match = re.search(r"(\r\n|\r|\n)\Z", old)
    if match is None or splice.end != len(old):
        return splice
    brk = match.group(1)
    cut = len(brk)
    if splice.start < cut or old[splice.start - cut : splice.start] != brk:
        return splice
    if splice.text and not splice.text.endswith(brk):
        return splice
    text = (brk + splice.text)[:-cut]
    shifted = Splice(start=splice.start - cut, end=splice.end - cut, text=text)
    if _splits_crlf(old, shifted.start) or _splits_crlf(old, shifted.end):
        return splice
    return shifted


def _splits_crlf(text: str, offset: int) -> bool:
    return 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n"


def minimal_edit(old: str, new: str, encoding: str) -> types.TextEdit | None:
    """One ``TextEdit`` that turns ``old`` into ``new``, with its range in ``encoding``
    units; ``None`` if the texts are equal."""
    splice = minimal_splice(old, new)
    if splice is None:
        return None
    return types.TextEdit(
        range=types.Range(
            start=position_at(old, splice.start, encoding),
            end=position_at(old, splice.end, encoding),
        ),
        new_text=splice.text,
    )
