"""An exclusive lock around a read-modify-write of a small state file that several processes
of the user update (the editor's server, ``lsp-agent mcp login``, another editor window): the
file is replaced atomically, but two writers that read it before either replaced it would each
drop what the other added. The lock is ``flock`` on ``<file>.lock`` beside it (created ``0600``,
its folder ``0700``), held for the whole update; POSIX only (elsewhere the update runs
unlocked, as before)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of ``path`` (waits for another holder). Raises ``OSError``
    when the lock file cannot be created."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(
        path.with_name(path.name + ".lock"),
        os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
        0o600,
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
