"""The newest files among those a glob matches, from a listing streamed in any order."""

from __future__ import annotations

import heapq
import os
import re

# Files whose metadata cannot be read rank after every file that has some (as ripgrep's own
# ``--sortr=modified`` ranks them).
_NO_MTIME = -(1 << 62)


class NewestMatches:
    """Accumulates a streamed ``rg --files`` listing (absolute paths, one per line) and keeps
    the ``keep`` most recently modified paths that ``matcher`` fully matches (relative to
    ``prefix``), ties by path; memory stays proportional to ``keep``, not to the listing.
    ``matcher=None`` takes every listed path (the listing was already filtered exactly).

    Only matching paths are stat'ed (modification time in ns, symlinks followed), as bytes:
    no path is decoded unless the matcher needs it or it is kept. ``listed`` counts the
    paths seen, ``total`` the matching ones.
    """

    def __init__(self, *, prefix: str, matcher: re.Pattern[str] | None, keep: int) -> None:
        self._prefix = prefix
        self._matcher = matcher
        self._keep = keep
        self._prune_at = max(8 * keep, 1024)
        self._ranked: list[tuple[int, bytes]] = []  # (-mtime, path)
        # The modification time of the keep-th newest path so far: an older one cannot be
        # kept, so it is not stored (equal times still compete by path).
        self._floor = _NO_MTIME
        self.listed = 0
        self.total = 0

    def feed(self, data: bytes) -> bool:
        """Take a run of listing lines (see :func:`lsp_agent.tools._proc.run_streamed`);
        always ``True`` (keep going)."""
        paths = data.split(b"\n")
        self.listed += len(paths)
        matched = [path for path in paths if path] if self._matcher is None else self._match(paths)
        self.total += len(matched)
        stat, floor, ranked, prune_at = os.stat, self._floor, self._ranked, self._prune_at
        for path in matched:
            try:
                mtime = stat(path).st_mtime_ns
            except OSError:
                mtime = _NO_MTIME
            if mtime < floor:
                continue
            ranked.append((-mtime, path))
            if len(ranked) >= prune_at:
                ranked[:] = heapq.nsmallest(self._keep, ranked)
                floor = self._floor = -ranked[-1][0]
        return True

    def result(self) -> list[str]:
        """The kept paths, newest first."""
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
