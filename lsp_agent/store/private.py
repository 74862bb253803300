"""The user's private runtime folder, shared by the background daemon (its socket) and the
registry of background runs: where it is and the checks that keep it private. Standard library
only, so the daemon's client (on the path of every ``run -p``) stays cheap to import.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path


def runtime_dir(environ: Mapping[str, str]) -> Path:
    """The daemon's directory for this user: ``$XDG_RUNTIME_DIR/lsp-agent`` when that names a
    directory (the XDG Base Directory specification's per-user runtime directory), else
    ``<tmp>/lsp-agent-<uid>``. Not created here."""
    xdg = environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg) and os.path.isdir(xdg):
        return Path(xdg) / "lsp-agent"
    # Imported here: tempfile brings shutil and the compression modules, ~10 ms that the
    # daemon's client (on the path of every run -p) skips when XDG_RUNTIME_DIR is set.
    import tempfile

    return Path(tempfile.gettempdir()) / f"lsp-agent-{os.getuid()}"


def runs_dir(environ: Mapping[str, str]) -> Path:
    """The registry folder of this user's background runs (not created here)."""
    return runtime_dir(environ) / "runs"


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (mode ``0700``) or check an existing one.

    Raises ``PermissionError`` naming the problem when it exists but belongs to another user,
    is not a directory or is open to others.
    """
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700)
    problem = private_dir_problem(path)
    if problem:
        raise PermissionError(problem)


def private_dir_problem(path: Path) -> str | None:
    """Why ``path`` is not a private directory of this user, or ``None`` when it is."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory"
    if info.st_uid != os.getuid():
        return f"{path} belongs to uid {info.st_uid}, not to this user"
    if info.st_mode & 0o077:
        return f"{path} is open to other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None
