"""Running ripgrep for Glob and Grep.

The ``rg`` executable comes from the ``ripgrep`` wheel, which installs it beside the Python
interpreter of the environment; a system ``rg`` on ``PATH`` is the fallback. ripgrep respects
``.gitignore`` (inside git repositories), ``.ignore`` and ``.rgignore``; hidden files are
searched, version-control directories are not.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

from lsp_agent.tools._proc import Streamed, run_drained, run_streamed
from lsp_agent.tools.base import ToolError

TIMEOUT_S = 30.0
"""Bound on one ripgrep run (seconds)."""

VCS_DIRS = (".git", ".svn", ".hg", ".bzr", ".jj", ".sl")
"""Directories never listed or searched, even with ``--hidden``."""

SMALL_CPU_MS = 5.0
"""A run of ripgrep over a directory that took at most this much CPU time (ms, user +
system) marks the directory small (see :class:`SmallRoots`)."""

_MAX_ROOTS = 64


def find_rg() -> str:
    """The path of the ``rg`` executable (looked up once per process, until it is found).
    Raises :class:`ToolError` when there is none."""
    found = _installed_rg()
    if found is None:
        _installed_rg.cache_clear()  # installed later: found by a later call
        raise ToolError(
            "ripgrep (rg) is not installed, so this search tool cannot run. "
            "Install the 'ripgrep' Python package into lsp-agent's environment, or use Bash."
        )
    return found


@cache
def _installed_rg() -> str | None:
    # Looked up once: the lookup (up to three PATH-style searches and sysconfig's path
    # expansion) costs ≈ 0.2 ms, a tenth of ripgrep's whole run on a small tree.
    here = os.path.dirname(sys.executable)
    found = shutil.which("rg", path=here)
    if found is None:
        found = shutil.which("rg", path=sysconfig.get_path("scripts")) or shutil.which("rg")
    return found


def base_args() -> list[str]:
    """Flags every run starts with: no user config file (its flags would change the output
    format), no colour, hidden files included."""
    return ["--no-config", "--color=never", "--hidden"]


def exclude_args() -> list[str]:
    """Globs excluding version-control directories. They must come after the caller's own
    globs: for ripgrep, a later glob wins over an earlier one that matches the same path."""
    return [f"--glob=!{name}" for name in VCS_DIRS]


async def stream_rg(
    args: Sequence[str], *, cwd: Path, on_lines: Callable[[bytes], bool]
) -> Streamed:
    """Run ``rg`` with ``args`` (never through a shell), handing its output lines to
    ``on_lines`` as they come (see :func:`lsp_agent.tools._proc.run_streamed`), bounded by
    :data:`TIMEOUT_S`: a run that takes longer is stopped and reported as ``"timeout"``.

    Raises :class:`ToolError` if ``rg`` is missing or cannot start; ``CancelledError`` kills
    it. Exit codes are left to the caller (0 matches, 1 none, 2 error).
    """
    rg = find_rg()
    try:
        # ripgrep starts no processes (no --pre, no --search-zip): the parent-death signal
        # is enough to keep it from outliving the server.
        return await run_streamed(
            [rg, *args], cwd=cwd, timeout_s=TIMEOUT_S, on_lines=on_lines, starts_processes=False
        )
    except OSError as exc:
        raise ToolError(f"Could not run ripgrep: {exc}") from None


async def drain_rg(
    args: Sequence[str], *, cwd: Path, drain: Callable[[int], bool], thread_name: str
) -> Streamed:
    """Run ``rg`` with ``args`` like :func:`stream_rg`, but its output is read from the pipe
    by ``drain(fd)`` on a thread of its own (see :func:`lsp_agent.tools._proc.run_drained`).

    Raises :class:`ToolError` if ``rg`` is missing or cannot start; ``CancelledError`` kills
    it.
    """
    rg = find_rg()
    try:
        return await run_drained(
            [rg, *args],
            cwd=cwd,
            timeout_s=TIMEOUT_S,
            drain=drain,
            thread_name=thread_name,
            starts_processes=False,  # as in stream_rg
        )
    except OSError as exc:
        raise ToolError(f"Could not run ripgrep: {exc}") from None


def timeout_note() -> str:
    """The note for results of a search stopped at :data:`TIMEOUT_S`."""
    return (
        f"(the search took longer than {TIMEOUT_S:.0f} s and was stopped: results are "
        "incomplete; narrow it with a more specific path, glob or type)"
    )


def path_key(path: bytes) -> bytes:
    """The sort key that gives ripgrep's ``--sort=path`` order: components compared one by
    one as bytes, which is the order of a depth-first walk that visits each directory's
    entries sorted by name (so ``a/b`` comes before ``a-c``, unlike plain string order).

    Each ``/`` becomes a NUL byte, which sorts before every byte a path component can hold,
    so comparing the keys as plain bytes compares the components one by one.
    """
    return path.replace(b"/", b"\0")


class SmallRoots:
    """The directories this tool's earlier searches found small, so the next search of one of
    them (or of a folder inside one) runs ripgrep with one thread.

    Why: ripgrep starts a pool of worker threads (one per core, at most 12) that hand the
    directory walk around; on a tree of a few hundred files that costs more than it saves
    (a 214-file benchmark workspace: 2.6 ms with one thread against 3.9 ms with two, on
    two cores). On a large tree the pool is what makes ripgrep fast, so a directory counts
    as small only after a search of it took at most :data:`SMALL_CPU_MS` of CPU time —
    known, without guessing, only for runs through the sentinel (their CPU time comes with
    the exit status); anything else is unknown and keeps ripgrep's default. A search that
    goes over the bound, or was stopped, marks the directory large again, so a tree that
    grows costs at most one search with one thread. Up to 64 directories are remembered
    (the oldest forgotten first). A directory no search measured yet counts as small when a
    quick look finds it tiny (:func:`looks_tiny`: at most 256 files and 4 MiB in all). Results
    and their order do not depend on the thread count (the tools sort what ripgrep writes).
    """

    def __init__(self) -> None:
        self._small: dict[str, bool] = {}

    def threads_args(self, root: Path) -> list[str]:
        """``["--threads=1"]`` when ``root`` (an absolute, resolved directory) or the
        nearest folder above it that a search measured is small, or when none was measured
        and ``root`` :func:`looks_tiny`; else ``[]``."""
        key = str(root)
        while True:
            small = self._small.get(key)
            if small is not None:
                return ["--threads=1"] if small else []
            parent = key.rpartition("/")[0] or "/"
            if parent == key:
                return ["--threads=1"] if looks_tiny(root) else []
            key = parent

    def note(self, root: Path, result: Streamed) -> None:
        """Record what the search of ``root`` (a directory) that ended with ``result`` tells
        about its size."""
        small: bool
        if result.stopped is not None:
            small = False
        elif result.cpu_ms is None:
            return
        else:
            small = result.cpu_ms <= SMALL_CPU_MS
        key = str(root)
        self._small.pop(key, None)
        self._small[key] = small
        if len(self._small) > _MAX_ROOTS:
            del self._small[next(iter(self._small))]


TINY_FILES = 256
"""At most this many files, and as many folders, make a tree tiny (see :func:`looks_tiny`)."""

TINY_BYTES = 4 << 20
"""At most this many bytes in its files make a tree tiny (see :func:`looks_tiny`)."""


def looks_tiny(root: Path) -> bool:
    """Whether the tree under ``root`` holds at most :data:`TINY_FILES` files (and as many
    folders) and :data:`TINY_BYTES` bytes in its files, by a walk that gives up as soon as
    it sees more.

    It counts what ripgrep would skip too (ignored files, hidden ones), except
    version-control directories; it does not follow links to directories (nor does
    ripgrep). Costs one ``scandir`` per directory and one ``lstat`` per file: ≈ 0.5 ms for
    250 files, less than ripgrep's worker threads cost on such a tree. Unreadable
    directories make the answer ``False``.
    """
    files = 0
    size = 0
    folders = 1
    pending = [str(root)]
    try:
        while pending:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in VCS_DIRS:
                            folders += 1
                            if folders > TINY_FILES:
                                return False
                            pending.append(entry.path)
                        continue
                    files += 1
                    size += entry.stat(follow_symlinks=False).st_size
                    if files > TINY_FILES or size > TINY_BYTES:
                        return False
    except OSError:
        return False
    return True
