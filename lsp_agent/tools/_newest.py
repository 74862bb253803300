"""The newest files among those a glob matches, from a listing streamed in any order."""

from __future__ import annotations

import heapq
import re

from lsp_agent.tools._mtimes import NO_MTIME, ParallelMtimes


class NewestMatches:
    """Accumulates a streamed ``rg --files`` listing (absolute paths, one per line) and keeps
    the ``keep`` most recently modified paths that ``matcher`` fully matches (relative to
    ``prefix``), ties by path; memory stays proportional to ``keep``, not to the listing.
    ``matcher=None`` takes every listed path (the listing was already filtered exactly).

    Only matching paths are stat'ed (modification time in ns, symlinks followed), as bytes,
    on worker threads (:class:`~lsp_agent.tools._mtimes.ParallelMtimes`) while the listing
    streams in: no path is decoded unless the matcher needs it or it is kept. ``listed``
    counts the paths seen, ``total`` the matching ones. Call :meth:`finish` after the last
    :meth:`feed`, and :meth:`close` in a ``finally``.
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
        self._mtimes = ParallelMtimes()
        self.listed = 0
        self.total = 0

    def feed(self, data: bytes) -> bool:
        """Take a run of listing lines (see :func:`lsp_agent.tools._proc.run_streamed`);
        always ``True`` (keep going)."""
        paths = data.split(b"\n")
        self.listed += len(paths)
        matched = [path for path in paths if path] if self._matcher is None else self._match(paths)
        self.total += len(matched)
        self._mtimes.submit(matched)
        for paths_, mtimes in self._mtimes.ready():
            self._rank(paths_, mtimes)
        return True

    async def finish(self) -> None:
        """Wait for the stat calls still running and rank their paths."""
        for paths, mtimes in await self._mtimes.drain():
            self._rank(paths, mtimes)
        self._mtimes.close()

    def close(self) -> None:
        """Stop stat'ing (a search that failed or was cancelled). Safe to call twice."""
        self._mtimes.close()

    def _rank(self, paths: list[bytes], mtimes: list[int]) -> None:
        floor, ranked, prune_at = self._floor, self._ranked, self._prune_at
        for path, mtime in zip(paths, mtimes, strict=True):
            if mtime < floor:
                continue
            ranked.append((-mtime, path))
            if len(ranked) >= prune_at:
                ranked[:] = heapq.nsmallest(self._keep, ranked)
                floor = self._floor = -ranked[-1][0]

    def result(self) -> list[str]:
        """The kept paths, newest first (after :meth:`finish`)."""
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
