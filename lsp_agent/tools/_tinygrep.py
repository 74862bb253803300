"""Grep's search of a tiny folder without ignore rules for a literal, made in this process.

Like Glob's listing (see :mod:`lsp_agent.tools._tinylist`, whose walk this reuses): starting
ripgrep costs ≈ 2.5 ms, reading a few dozen small files ≈ 0.1 ms. :func:`tiny_grep` gives
what ripgrep would print, byte for byte, in the cases where that is certain, and ``None`` in
every other case (the caller then runs ripgrep):

- the pattern is a plain literal: ASCII letters, digits, spaces and punctuation that is not
  special in ripgrep's regex syntax, or a special character escaped with ``\\`` (``median\\(``);
  no other flag changes its meaning (no ``-i``, ``multiline``, ``glob`` or ``type``);
- files-with-matches output, or content output without context lines;
- every file can be read and is still a regular file when it is opened (not a link or a
  pipe put in its place since the walk), and the files hold at most
  :data:`~lsp_agent.tools._rg.TINY_BYTES` bytes in all; the output is at most
  :data:`MAX_OUTPUT_BYTES`;
- no file starts with a UTF-16 byte-order mark (ripgrep transcodes those, and the literal
  may match the result), and no file that contains the literal starts with a UTF-8 one
  (ripgrep strips it), holds a NUL byte (ripgrep's binary-file rules decide then) or holds a
  matching line longer than :data:`SAFE_COLUMNS` bytes (ripgrep shortens lines over 500).

Within those bounds ripgrep's answer is simple: a file matches when its bytes contain the
literal (it cannot span lines: it holds no newline), and a matching line is printed as it is,
``\\r`` included, with a newline added to a last line that lacks one.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from lsp_agent.tools import _rg
from lsp_agent.tools._tinylist import TinyListings

SAFE_COLUMNS = 400
"""A matching line longer than this (bytes) leaves the search to ripgrep, whose
``--max-columns=500`` preview it would need."""

MAX_OUTPUT_BYTES = 1 << 20
"""More output than this (bytes) leaves the search to ripgrep: Grep's own caps on what it
reads from ripgrep (8 MiB and more) then never come into play here."""

# Characters that stand for themselves in ripgrep's regex syntax (outside a class).
_PLAIN = re.compile(r"[A-Za-z0-9 _\-:;,=<>/!@%&~#'\"`]")
# Characters that do not, and may appear escaped with a backslash to stand for themselves.
_SPECIAL = frozenset(".()[]{}*+?^$|\\")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def literal_of(pattern: str) -> bytes | None:
    """The bytes ``pattern`` matches when it is a plain literal (see the module docstring),
    else ``None``."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1] not in _SPECIAL:
                return None
            out.append(pattern[i + 1])
            i += 2
            continue
        if not _PLAIN.fullmatch(char):
            return None
        out.append(char)
        i += 1
    return "".join(out).encode("ascii") if out else None


def tiny_grep(
    root: Path,
    literal: bytes,
    *,
    content: bool,
    line_numbers: bool,
    listings: TinyListings,
) -> bytes | None:
    """What ``rg`` prints for Grep's search of ``root`` (an absolute, resolved directory) for
    ``literal`` — files-with-matches output, or with ``content`` the content output with
    Grep's flags (path, ``\\x00:``, the line number when ``line_numbers``, ``\\x00:``, the
    line) — in no particular order (Grep orders its results itself), or ``None`` when that is
    not certain without running ripgrep (see the module docstring). ``listings`` lists the
    folder (and remembers the folders it gave up on). Never raises ``OSError``."""
    listed = listings.listing(root)
    if listed is None:
        return None
    out: list[bytes] = []
    budget = _rg.TINY_BYTES
    for path in listed.split(b"\n"):
        if not path:
            continue
        try:
            # The walk saw a regular file, but the name may since lead elsewhere: not through
            # a link (ripgrep follows none), and a pipe put in its place must not block the
            # open until a writer comes (ripgrep would skip it: left to ripgrep).
            fd = os.open(path, _OPEN_FLAGS)
            # Unbuffered, sized by fstat: a buffered read of "at most the budget" would
            # allocate the whole budget (megabytes) for every small file.
            with open(fd, "rb", buffering=0) as handle:
                status = os.fstat(fd)
                if not stat.S_ISREG(status.st_mode) or status.st_size > budget:
                    return None
                data = handle.readall()
        except OSError:
            return None
        budget -= len(data)
        if budget < 0 or data.startswith(_UTF16_BOMS):
            return None
        if literal not in data:
            continue
        if b"\0" in data or data.startswith(_UTF8_BOM):
            return None
        if not content:
            out.append(path + b"\n")
            continue
        lines = _matching_lines(data, literal, path, line_numbers)
        if lines is None:
            return None
        out.extend(lines)
    joined = b"".join(out)
    return joined if len(joined) <= MAX_OUTPUT_BYTES else None


def _matching_lines(
    data: bytes, literal: bytes, path: bytes, line_numbers: bool
) -> list[bytes] | None:
    """The content output lines of the file ``path`` holding ``data``, or ``None`` when a
    matching line is longer than :data:`SAFE_COLUMNS`."""
    out: list[bytes] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if literal not in line:
            continue
        if len(line) > SAFE_COLUMNS:
            return None
        head = path + (b"\x00:" + str(number).encode() if line_numbers else b"")
        out.append(head + b"\x00:" + line + b"\n")
    return out
