"""The newest files among those a glob matches, from a listing streamed in any order."""

from __future__ import annotations

import heapq
import os
import re
import threading

from lsp_agent.tools._mtimes import NO_MTIME

READ_BYTES = 1 << 20
"""Largest read from the listing's pipe (bytes)."""


class NewestMatches:
    """Accumulates a streamed ``rg --files`` listing (absolute paths, one per line) and keeps
    the ``keep`` most recently modified paths that ``matcher`` fully matches (relative to
    ``prefix``), ties by path; memory stays proportional to ``keep``, not to the listing.
    ``matcher=None`` takes every listed path (the listing was already filtered exactly).

    Only matching paths are stat'ed (modification time in ns, symlinks followed), as bytes,
    and no path is decoded unless the matcher needs it or it is kept. ``listed`` counts the
    paths seen, ``total`` the matching ones.

    Everything happens on the thread that calls :meth:`drain` (or :meth:`feed`): one thread
    that reads the pipe, splits, matches, stats and ranks costs less than handing batches
    between threads, and on a machine with few cores the listing program needs the others.
    :meth:`stop` (from any thread) makes :meth:`drain` return at its next batch.
    """

    def __init__(self, *, prefix: str, matcher: re.Pattern[str] | None, keep: int) -> None:
        self._prefix = prefix
        self._matcher = matcher
        self._keep = keep
        self._prune_at = max(8 * keep, 1024)
        self._ranked: list[tuple[int, bytes]] = []  # (-mtime, path)
        # The modification time of the keep-th newest path so far: an older one cannot be
        # kept, so it is not stored (equal times still compete by path).
        self._floor = NO_MTIME
        self._stopped = threading.Event()
        self.listed = 0
        self.total = 0

    def drain(self, fd: int) -> bool:
        """Read the listing from the pipe ``fd`` (blocking reads of up to
        :data:`READ_BYTES`) until end of file, taking every complete line as :meth:`feed`
        does and a last line without a newline at the end. ``False`` when :meth:`stop`
        ended it early, else ``True``. Does not close ``fd``.

        Raises ``OSError`` if reading fails.
        """
        buffer = bytearray(READ_BYTES)
        view = memoryview(buffer)
        rest = b""
        while not self._stopped.is_set():
            size = os.readv(fd, [buffer])
            if not size:
                if rest:
                    self.feed(rest)
                return True
            data = rest + view[:size] if rest else bytes(view[:size])
            cut = data.rfind(b"\n")
            if cut < 0:
                rest = data
                continue
            rest = data[cut + 1 :]
            self.feed(data[:cut])
        return False

    def stop(self) -> None:
        """Make :meth:`drain` return before its next read. Safe from any thread, and twice."""
        self._stopped.set()

    def feed(self, data: bytes) -> bool:
        """Take a run of listing lines joined by ``\\n``: match, stat and rank them; always
        ``True`` (keep going)."""
        paths = data.split(b"\n")
        self.listed += len(paths)
        matched = [path for path in paths if path] if self._matcher is None else self._match(paths)
        self.total += len(matched)
        self._rank(matched)
        return True

    def _rank(self, paths: list[bytes]) -> None:
        floor, ranked, prune_at = self._floor, self._ranked, self._prune_at
        stat = os.stat
        for path in paths:
            try:
                mtime = stat(path).st_mtime_ns
            except (OSError, ValueError):
                mtime = NO_MTIME
            if mtime < floor:
                continue
            ranked.append((-mtime, path))
            if len(ranked) >= prune_at:
                ranked[:] = heapq.nsmallest(self._keep, ranked)
                floor = self._floor = -ranked[-1][0]

    def result(self) -> list[str]:
        """The kept paths, newest first (after the listing ended)."""
        return [
            path.decode("utf-8", "replace") for _, path in heapq.nsmallest(self._keep, self._ranked)
        ]

    def _match(self, paths: list[bytes]) -> list[bytes]:
        assert self._matcher is not None
        fullmatch = self._matcher.fullmatch
        prefix, skip = self._prefix, len(self._prefix)
        # Decoding keeps the line boundaries ("\n" is never part of a multi-byte sequence).
        texts = b"\n".join(paths).decode("utf-8", "replace").split("\n")
        return [
            path
            for path, text in zip(paths, texts, strict=True)
            if text and fullmatch(text, skip if text.startswith(prefix) else 0)
        ]
