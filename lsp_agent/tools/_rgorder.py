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
    """Output lines in path order. ``lines`` is what was kept (decoded, a CRLF file's ``\\r``
    removed); ``total_lines`` counts every output line ripgrep produced; ``total_count`` is
    the sum of the per-file counts (count mode; 0 otherwise); ``cut`` says lines were given
    up to stay within the budget."""

    lines: list[str]
    total_lines: int
    total_count: int
    cut: bool


@dataclass(kw_only=True)
class _Piece:
    key: list[bytes]
    lines: list[bytes]
    size: int


class PathOrdered:
    """Collects ripgrep's content (``count=False``) or count (``count=True``) output, streamed
    in any file order, and gives it back in ``--sort=path`` order, keeping at most about
    ``budget_bytes`` of it (the budget is checked per file piece)."""

    def __init__(self, *, count: bool, budget_bytes: int) -> None:
        self._count = count
        self._budget = budget_bytes
        self._pieces: list[_Piece] = []
        self._kept_bytes = 0
        self._limit: list[bytes] | None = None  # pieces sorting at or after this are dropped
        self._path: bytes | None = None
        self._current: _Piece | None = None
        self._pending_separator = False
        self._separators = False
        self._pieces_seen = 0
        self._lines_seen = 0
        self.total_count = 0

    def feed(self, data: bytes) -> bool:
        """Take a run of output lines (see :func:`lsp_agent.tools._proc.run_streamed`);
        always ``True`` (keep going)."""
        for line in data.split(b"\n"):
            if not line:
                continue
            nul = line.find(b"\0")
            if nul < 0:
                if line == _SEPARATOR:
                    # Between two groups of one file, or between two files: the next line
                    # tells which.
                    self._separators = True
                    self._pending_separator = True
                    continue
                # ripgrep's own notes (e.g. about a binary file) stay with their file.
                self._append(line)
                continue
            path = line[:nul]
            if path != self._path or self._current is None:
                self._close()
                self._path = path
                self._current = _Piece(key=path_key(path), lines=[], size=0)
                self._pieces_seen += 1
                self._pending_separator = False
            elif self._pending_separator:
                self._append(_SEPARATOR)
                self._pending_separator = False
            if self._count:
                head, _, number = line.partition(b"\0")
                if number.isdigit():
                    self.total_count += int(number)
                self._append(head + b":" + number)
            else:
                self._append(line.replace(b"\0", b""))
        return True

    def result(self) -> Ordered:
        """The kept lines in path order (call once, after the last :meth:`feed`)."""
        self._close()
        self._pieces.sort(key=lambda piece: piece.key)
        lines: list[str] = []
        for index, piece in enumerate(self._pieces):
            if index and self._separators:
                lines.append("--")
            lines.extend(line.decode("utf-8", "replace").removesuffix("\r") for line in piece.lines)
        file_separators = max(0, self._pieces_seen - 1) if self._separators else 0
        return Ordered(
            lines=lines,
            total_lines=self._lines_seen + file_separators,
            total_count=self.total_count,
            cut=self._limit is not None,
        )

    def _append(self, line: bytes) -> None:
        if self._current is None:
            self._current = _Piece(key=[], lines=[], size=0)
            self._pieces_seen += 1
        self._current.lines.append(line)
        self._current.size += len(line) + 1
        self._lines_seen += 1

    def _close(self) -> None:
        piece, self._current = self._current, None
        if piece is None:
            return
        if self._limit is not None and piece.key >= self._limit:
            return
        self._pieces.append(piece)
        self._kept_bytes += piece.size
        if self._kept_bytes > 2 * self._budget:
            self._shrink()

    def _shrink(self) -> None:
        """Give up the pieces that sort last until the budget holds again."""
        self._pieces.sort(key=lambda piece: piece.key)
        while self._pieces and self._kept_bytes > self._budget:
            dropped = self._pieces.pop()
            self._kept_bytes -= dropped.size
            self._limit = dropped.key
