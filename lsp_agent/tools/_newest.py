"""The newest files among those a glob matches, from a listing streamed in any order."""

from __future__ import annotations

import heapq
import os
import re

# Files whose metadata cannot be read rank after every file that has some (as ripgrep's own
# ``--sortr=modified`` ranks them).
_NO_MTIME = 1 << 62


class NewestMatches:
    """Accumulates a streamed ``rg --files`` listing (absolute paths, one per line) and keeps
    the ``keep`` most recently modified paths that ``matcher`` fully matches (relative to
    ``prefix``), ties by path; memory stays proportional to ``keep``, not to the listing.

    Only matching paths are stat'ed (modification time in ns, symlinks followed). ``listed``
    counts the paths seen, ``total`` the matching ones.
    """

    def __init__(self, *, prefix: str, matcher: re.Pattern[str], keep: int) -> None:
        self._prefix = prefix
        self._matcher = matcher
        self._keep = keep
        self._prune_at = max(8 * keep, 1024)
        self._ranked: list[tuple[int, str]] = []
        self.listed = 0
        self.total = 0

    def feed(self, data: bytes) -> bool:
        """Take a run of listing lines (see :func:`lsp_agent.tools._proc.run_streamed`);
        always ``True`` (keep going)."""
        text = data.decode("utf-8", "replace")
        fullmatch = self._matcher.fullmatch
        prefix, skip = self._prefix, len(self._prefix)
        ranked = self._ranked
        lines = text.split("\n")
        self.listed += len(lines)
        for path in lines:
            if not path or not fullmatch(path, skip if path.startswith(prefix) else 0):
                continue
            self.total += 1
            try:
                ranked.append((-os.stat(path).st_mtime_ns, path))
            except OSError:
                ranked.append((_NO_MTIME, path))
            if len(ranked) >= self._prune_at:
                ranked[:] = heapq.nsmallest(self._keep, ranked)
        return True

    def result(self) -> list[str]:
        """The kept paths, newest first."""
        return [path for _, path in heapq.nsmallest(self._keep, self._ranked)]
