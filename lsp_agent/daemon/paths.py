"""Where the daemon's socket lives, and the checks that keep it private.

The socket is ``$XDG_RUNTIME_DIR/lsp-agent/daemon.sock`` when ``XDG_RUNTIME_DIR`` names a
directory (the per-user runtime directory of the XDG Base Directory specification), else
``/tmp/lsp-agent-<uid>/daemon.sock``. Its directory must belong to the user and give no access
to anyone else (mode ``0700``), and the socket itself must belong to the user with mode
``0600``; the client refuses anything else (fail closed: it then runs in-process), and the
server checks each peer's uid as well (:func:`peer_uid`).
"""

from __future__ import annotations

import os
import socket
import stat
import struct
from collections.abc import Mapping
from pathlib import Path

from lsp_agent.store.private import ensure_private_dir, private_dir_problem, runtime_dir

__all__ = [
    "ensure_private_dir",
    "peer_uid",
    "private_dir_problem",
    "runtime_dir",
    "socket_fix",
    "socket_path",
    "socket_problem",
]

SOCKET_NAME = "daemon.sock"
LOG_NAME = "daemon.log"


def socket_path(environ: Mapping[str, str]) -> Path:
    """The daemon's socket for this user."""
    return runtime_dir(environ) / SOCKET_NAME


def socket_problem(path: Path) -> str | None:
    """Why the socket at ``path`` (and its directory) must not be trusted, or ``None``.
    A missing socket (or directory) is a problem too (``"no daemon"``)."""
    if not os.path.lexists(path.parent):
        return "no daemon"
    problem = private_dir_problem(path.parent)
    if problem:
        return problem
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "no daemon"
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if not stat.S_ISSOCK(info.st_mode):
        return f"{path} is not a socket"
    if info.st_uid != os.getuid():
        return f"{path} belongs to uid {info.st_uid}, not to this user"
    if stat.S_IMODE(info.st_mode) & 0o177:
        return f"{path} has loose permissions (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (``SO_PEERCRED``), or
    ``None`` where the platform does not say (then the connection is refused)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


def socket_fix(path: Path) -> str:
    """What the user can do about a socket :func:`socket_problem` refuses (other than a
    missing one): make the folder or the socket private again when they are this user's, else
    leave them alone and use another runtime folder."""
    try:
        folder, sock = os.lstat(path.parent), os.lstat(path)
    except OSError:
        sock = None
        folder = None
    mine = os.getuid()
    if folder is not None and folder.st_uid == mine and folder.st_mode & 0o077:
        return f"make the folder private again: chmod 700 {path.parent}"
    if sock is not None and sock.st_uid == mine and stat.S_IMODE(sock.st_mode) & 0o177:
        return f"make the socket private again: chmod 600 {path}"
    return (
        "lsp-agent will not use a socket it cannot trust: remove it if you know where it comes "
        "from, or set XDG_RUNTIME_DIR to a folder of your own"
    )
