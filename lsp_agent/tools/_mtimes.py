"""Modification times of many paths, read on worker threads while ripgrep's output streams in.

Grep's files mode ranks its matches newest first, so every match is stat'ed (Glob does the
same on one thread of its own, see :mod:`lsp_agent.tools._newest`). On a large tree that is
the tool's main cost (≈ 115,000 ``stat`` calls for ``**/*.py`` on a 260,000-file tree). Done
in the event loop, as each batch of output arrives, it blocked the loop and left ripgrep
waiting on a full pipe, so listing and stat'ing ran one after the other. Here the calls run on
a few threads (``os.stat`` releases the interpreter lock for the system call), so they overlap
ripgrep's listing and each other, and the loop only hands out work and collects results."""

from __future__ import annotations

import asyncio
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

# Files whose metadata cannot be read rank after every file that has some (as ripgrep's own
# ``--sortr=modified`` ranks them).
NO_MTIME = -(1 << 62)

# Below this many paths in all, the calls are made inline: starting threads costs more than
# a few hundred ``stat`` calls.
INLINE_PATHS = 512
# Paths per unit of work handed to a thread.
CHUNK_PATHS = 2048
# Paths handed out and not yet collected before :meth:`ParallelMtimes.submit` waits for the
# oldest unit, so memory stays bounded however far ripgrep runs ahead.
MAX_PENDING_PATHS = 64 * CHUNK_PATHS


def stat_mtimes(paths: list[bytes]) -> list[int]:
    """Modification times in ns (symlinks followed) of ``paths``, in order;
    :data:`NO_MTIME` for a path that cannot be stat'ed. Never raises for a path."""
    out: list[int] = []
    append, stat = out.append, os.stat
    for path in paths:
        try:
            append(stat(path).st_mtime_ns)
        except (OSError, ValueError):
            append(NO_MTIME)
    return out


class ParallelMtimes:
    """Stats batches of paths on up to ``workers`` threads (default: the CPU count, at most
    4), handing back ``(paths, mtimes)`` pairs in submission order.

    Use from one thread (the event loop): :meth:`submit` each batch, take what is done with
    :meth:`ready`, then ``await`` :meth:`drain` for the rest, and :meth:`close` in a
    ``finally`` (it drops work not yet started, so a cancelled search stops stat'ing).
    """

    def __init__(self, *, workers: int | None = None) -> None:
        self._workers = workers or max(1, min(4, os.cpu_count() or 1))
        self._pool: ThreadPoolExecutor | None = None
        self._pending: deque[tuple[list[bytes], Future[list[int]]]] = deque()
        self._pending_paths = 0
        self._done: list[tuple[list[bytes], list[int]]] = []
        self._seen = 0

    def submit(self, paths: list[bytes]) -> None:
        """Queue ``paths`` to be stat'ed. While fewer than :data:`INLINE_PATHS` paths have
        been submitted in all, they are stat'ed at once, inline. Blocks (waiting for the
        oldest unit) only while more than :data:`MAX_PENDING_PATHS` are outstanding."""
        if not paths:
            return
        self._seen += len(paths)
        if self._pool is None and self._seen <= INLINE_PATHS:
            self._done.append((paths, stat_mtimes(paths)))
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=self._workers, thread_name_prefix="lsp-agent-stat"
            )
        for start in range(0, len(paths), CHUNK_PATHS):
            chunk = paths[start : start + CHUNK_PATHS]
            self._pending.append((chunk, self._pool.submit(stat_mtimes, chunk)))
            self._pending_paths += len(chunk)
        while self._pending_paths > MAX_PENDING_PATHS:
            self._pending[0][1].result()
            self._collect()

    def ready(self) -> list[tuple[list[bytes], list[int]]]:
        """The batches finished so far and not given out before, in submission order."""
        self._collect()
        done, self._done = self._done, []
        return done

    def _collect(self) -> None:
        while self._pending and self._pending[0][1].done():
            chunk, future = self._pending.popleft()
            self._pending_paths -= len(chunk)
            self._done.append((chunk, future.result()))

    async def drain(self) -> list[tuple[list[bytes], list[int]]]:
        """Wait for every submitted batch without blocking the event loop; the batches not
        yet given out by :meth:`ready`, in submission order."""
        out = self.ready()
        while self._pending:
            chunk, future = self._pending.popleft()
            self._pending_paths -= len(chunk)
            out.append((chunk, await asyncio.wrap_future(future)))
        return out

    def close(self) -> None:
        """Stop the threads; work not yet started is dropped. Safe to call twice."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        self._pending.clear()
        self._pending_paths = 0
