"""Line handling shared by the file tools.

Line breaks follow the LSP definition (``\\r\\n``, ``\\r`` and ``\\n``) so the line numbers the
model sees are the ones the editor shows. The model always writes ``\\n``; :class:`LfView`
gives the text with every break as ``\\n`` and maps offsets back to the original text, so an
edit computed on the ``\\n`` view can be applied to CRLF (or mixed) text byte-exactly outside
the edited region.
"""

from __future__ import annotations

import bisect
import operator
import re
from dataclasses import dataclass, field

_BREAK = re.compile(r"\r\n|\r|\n")

MAX_LINE_CHARS = 2000
"""Longer lines are cut in numbered listings (characters)."""


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` without their breaks, like ``cat -n`` counts them.

    A final line break does not start another line: ``"a\\nb\\n"`` → ``["a", "b"]``,
    ``""`` → ``[]``, ``"\\n"`` → ``[""]``.
    """
    if not text:
        return []
    # Without a CR every break is a LF: str.split gives the same list, without the regex.
    lines = text.split("\n") if "\r" not in text else _BREAK.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def to_lf(text: str) -> str:
    """``text`` with every ``\\r\\n`` and lone ``\\r`` replaced by ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def dominant_eol(text: str) -> str:
    """The most frequent line break in ``text`` (``"\\r\\n"``, ``"\\r"`` or ``"\\n"``).

    Ties and texts without breaks give ``"\\n"``; new lines an edit adds use this break.
    """
    crlf = text.count("\r\n")
    cr = text.count("\r") - crlf
    lf = text.count("\n") - crlf
    best, eol = lf, "\n"
    if crlf > best:
        best, eol = crlf, "\r\n"
    if cr > best:
        eol = "\r"
    return eol


def with_eol(text_lf: str, eol: str) -> str:
    """``text_lf`` (``\\n`` breaks only) with every break written as ``eol``."""
    return text_lf if eol == "\n" else text_lf.replace("\n", eol)


def clip_line(line: str, max_chars: int = MAX_LINE_CHARS) -> str:
    """``line`` cut to ``max_chars`` characters with a marker saying how long it was."""
    if len(line) <= max_chars:
        return line
    return f"{line[:max_chars]}… [line truncated: {len(line)} characters]"


_NUMBER_TABS = tuple(map("{}\t".format, range(1, 1001)))
"""The prefixes of lines 1-1000 in a listing (built once, about 0.1 ms at import): adding
one to each line is several times cheaper than formatting the number, and most reads start
at line 1 of a file shorter than this."""


def numbered(lines: list[str], first_line: int) -> str:
    """``cat -n`` style listing: the 1-based line number, a TAB, then the line (tabs kept
    literal, long lines clipped), one line per row. The number is not padded (Claude Code's
    current Read format): ``cat -n``'s six columns cost five bytes on most lines of every
    read, which the prompt then carries on every later request."""
    if max(map(len, lines), default=0) <= MAX_LINE_CHARS:  # no line to clip: join in C
        end = first_line - 1 + len(lines)
        if first_line >= 1 and end <= len(_NUMBER_TABS):
            return "\n".join(map(operator.add, _NUMBER_TABS[first_line - 1 : end], lines))
        numbers = map(str, range(first_line, first_line + len(lines)))
        return "\n".join(map("\t".join, zip(numbers, lines, strict=True)))
    return "\n".join(
        f"{number}\t{line if len(line) <= MAX_LINE_CHARS else clip_line(line)}"
        for number, line in enumerate(lines, start=first_line)
    )


@dataclass(frozen=True)
class LfView:
    """``original`` seen with ``\\n`` breaks, plus the map back to ``original`` offsets.

    Only ``\\r\\n`` changes lengths (two characters become one), so the map is the sorted list
    of ``\\n``-view offsets where a CRLF stood.
    """

    original: str
    text: str = field(init=False)
    _crlf_at: list[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        crlf_at: list[int] = []
        pieces: list[str] = []
        removed = 0
        last = 0
        for match in _BREAK.finditer(self.original):
            if match.group() != "\n":
                pieces.append(self.original[last : match.start()])
                pieces.append("\n")
                if match.group() == "\r\n":
                    crlf_at.append(match.start() - removed)
                    removed += 1
                last = match.end()
        pieces.append(self.original[last:])
        object.__setattr__(self, "text", "".join(pieces))
        object.__setattr__(self, "_crlf_at", crlf_at)

    def to_original(self, offset: int) -> int:
        """The offset in ``original`` of ``\\n``-view ``offset`` (a break counts as one char)."""
        return offset + bisect.bisect_left(self._crlf_at, offset)

    def line_of(self, offset: int) -> int:
        """The 1-based line number of ``\\n``-view ``offset``."""
        return self.text.count("\n", 0, offset) + 1
