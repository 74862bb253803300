"""Grep's content and count output put in path order in-process, from ripgrep running unsorted.

ripgrep's ``--sort=path`` makes it search with one thread. Unsorted, in parallel, it still
writes each file's output in one piece, so the tool collects those pieces and orders them
itself. To find where a piece starts, ripgrep is asked to mark the end of every path with a
NUL byte (which no path contains): in content mode through the field separators
(``path NUL : line NUL : text``; ``-`` instead of ``:`` for context lines), in count mode with
``--null`` (``path NUL count``). Removing the NULs gives back ripgrep's usual lines.

Memory is bounded: only the pieces that sort first are kept, up to a byte budget; a piece
that sorts after one already given up is dropped, so what is kept is always an exact prefix
of the path-ordered output, and the totals count everything.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsp_agent.tools._rg import path_key

CONTENT_ARGS = ("--field-match-separator=\\x00:", "--field-context-separator=\\x00-")
"""ripgrep flags that mark the end of the path in content lines (see the module doc)."""

COUNT_ARGS = ("--null",)
"""ripgrep flags that mark the end of the path in count lines."""

_SEPARATOR = b"--"


@dataclass(frozen=True, kw_only=True)
class Ordered:
    """Output lines in path order. ``lines`` is what was kept and asked for (decoded, a CRLF
    file's ``\\r`` removed); ``total_lines`` counts every output line ripgrep produced;
    ``total_count`` is the sum of the per-file counts (count mode; 0 otherwise); ``cut`` says
    lines were given up to stay within the budget."""

    lines: list[str]
    total_lines: int
    total_count: int
    cut: bool


class PathOrdered:
    """Collects ripgrep's content (``count=False``) or count (``count=True``) output, streamed
    in any file order, and gives it back in ``--sort=path`` order, keeping at most about
    ``budget_bytes`` of it (the budget is checked per file piece).

    Work is per file piece, not per line: a line that continues the current file's piece is
    recognised by its path prefix and stays in the chunk it came in until the piece is cut
    out as one ``bytes`` block; lines are decoded only when asked for (:meth:`result`).
    """

    def __init__(self, *, count: bool, budget_bytes: int) -> None:
        self._count = count
        self._budget = budget_bytes
        self._pieces: list[tuple[bytes, bytes]] = []  # (path key, the piece's lines)
        self._kept_bytes = 0
        self._limit: bytes | None = None  # pieces sorting at or after this are dropped
        self._prefix: bytes | None = None  # the current piece's path and its NUL
        self._key = b""
        self._parts: list[bytes] = []
        self._open = False
        self._pending_separator = False
        self._separators = False
        self._pieces_seen = 0
        self._lines_seen = 0
        self.total_count = 0

    def feed(self, data: bytes) -> bool:
        """Take a run of output lines (see :func:`lsp_agent.tools._proc.run_streamed`);
        always ``True`` (keep going)."""
        lines = data.split(b"\n")
        parts = self._parts
        start = 0  # the first line of the current piece not yet in ``parts``
        # The prefix of lines that simply continue the current piece (none while a separator
        # waits to be placed; no line starts with a newline).
        same = self._continuation()
        for index, line in enumerate(lines):
            if line.startswith(same):
                continue
            if start < index:
                parts.append(b"\n".join(lines[start:index]))
            nul = line.find(b"\0")
            if nul < 0:
                start = index + 1
                self._line_without_path(line)
            elif self._prefix is not None and line.startswith(self._prefix):
                # The same file after a separator: the separator was inside the file.
                start = index
                parts.append(_SEPARATOR)
                self._pending_separator = False
            else:
                start = index
                self._start_piece(line, nul)
            same = self._continuation()
        if start < len(lines):
            parts.append(b"\n".join(lines[start:]))
        return True

    def _continuation(self) -> bytes:
        if self._prefix is None or self._pending_separator:
            return b"\n"
        return self._prefix

    def result(self, *, max_lines: int | None = None, max_chars: int | None = None) -> Ordered:
        """The kept lines in path order (call once, after the last :meth:`feed`). At most
        ``max_lines`` lines are decoded, and none after the joined text (lines separated by
        one character) is longer than ``max_chars`` characters; the totals count all."""
        self._close()
        self._pieces.sort()
        lines: list[str] = []
        chars = -1
        wanted = max_lines if max_lines is not None else -1
        limit = max_chars if max_chars is not None else -1
        replacement = b":" if self._count else b""
        for index, (_key, block) in enumerate(self._pieces):
            if len(lines) == wanted or (limit >= 0 and chars > limit):
                break
            if index and self._separators:
                lines.append("--")
                chars += 3
            text = block.replace(b"\0", replacement).decode("utf-8", "replace")
            for line in text.split("\n"):
                if len(lines) == wanted or (limit >= 0 and chars > limit):
                    break
                kept = line.removesuffix("\r")
                lines.append(kept)
                chars += len(kept) + 1
        file_separators = max(0, self._pieces_seen - 1) if self._separators else 0
        return Ordered(
            lines=lines,
            total_lines=self._lines_seen + file_separators,
            total_count=self.total_count,
            cut=self._limit is not None,
        )

    def _line_without_path(self, line: bytes) -> None:
        if not line:
            return  # only a trailing newline gives one (every content line has a path)
        if line == _SEPARATOR:
            # Between two groups of one file, or between two files: the next line tells which.
            self._separators = True
            self._pending_separator = True
            return
        # ripgrep's own notes (e.g. about a binary file) stay with their file.
        self._open_piece_if_none()
        self._parts.append(line)

    def _start_piece(self, line: bytes, nul: int) -> None:
        self._close()
        self._pending_separator = False
        self._prefix = line[: nul + 1]
        self._key = path_key(line[:nul])
        self._open = True
        self._pieces_seen += 1
        if self._count:
            number = line[nul + 1 :]
            if number.isdigit():
                self.total_count += int(number)

    def _open_piece_if_none(self) -> None:
        if not self._open:
            self._open = True
            self._key = b""
            self._pieces_seen += 1

    def _close(self) -> None:
        if not self._open:
            return
        block = b"\n".join(self._parts)
        self._parts.clear()
        self._open = False
        self._prefix = None
        self._lines_seen += block.count(b"\n") + 1
        if self._limit is not None and self._key >= self._limit:
            return
        self._pieces.append((self._key, block))
        self._kept_bytes += len(block) + 1
        if self._kept_bytes > 2 * self._budget:
            self._shrink()

    def _shrink(self) -> None:
        """Give up the pieces that sort last until the budget holds again."""
        self._pieces.sort()
        while self._pieces and self._kept_bytes > self._budget:
            key, block = self._pieces.pop()
            self._kept_bytes -= len(block) + 1
            self._limit = key
