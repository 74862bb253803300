"""The daemon's messages: one JSON object per line over the Unix socket; the client's standard
descriptors travel with its first message (``SCM_RIGHTS``).

A run: client ``{"op": "run", "build": B, "argv": [...], "cwd": D, "env": {...}}``; daemon
``{"ok": true, "send": "fds"}`` (or ``{"error": "..."}``); client ``{"op": "fds"}`` with its
stdin, stdout and stderr attached; daemon ``{"ok": true, "pid": P}``; later possibly client
``{"op": "signal", "signal": N}``; at the end daemon ``{"exit": CODE}``.

A background run adds ``"bg": {"session_id": S|null, "prompt": P, "cwd": PROJECT}`` to the
first message, sends only its stdin with ``{"op": "fds"}`` and gets
``{"ok": true, "id": ID, "pid": P, "session_id": S}``; the connection then ends. Also
``{"op": "status"}``, ``{"op": "stop"}`` and ``{"op": "kill", "id": ID}`` (a background run),
each answered with ``{"ok": true, ...}`` or ``{"error": "..."}``.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from lsp_agent import __version__

MAX_MESSAGE_BYTES = 1 << 20
"""Longest message accepted (bytes); an environment is a few KiB."""


def build_key() -> str:
    """Identifies the code a process runs: the version, where the package lives and the newest
    modification time of its modules (an editable install changes without a version bump). A daemon
    whose key differs from the client's is an older (or newer) build and is not used."""
    newest = 0
    count = 0
    package = str(Path(__file__).resolve().parent.parent)
    stack = [package]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                    stack.append(entry.path)
                elif entry.name.endswith(".py"):
                    newest = max(newest, entry.stat().st_mtime_ns)
                    count += 1
    return f"{__version__}:{package}:{count}:{newest}"


def send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    """Send one message (with ``fds`` attached, if any)."""
    data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.sendall(data)


class Reader:
    """Reads messages (and descriptors sent with them) from one socket."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = b""
        self.fds: list[int] = []

    def read(self, *, deadline: float | None = None) -> dict[str, Any] | None:
        """The next message; ``None`` at end of stream. ``deadline`` (a ``time.monotonic()``
        value) bounds the whole message, not each receive, so a peer that sends a byte at a
        time cannot hold the reader. Raises ``ValueError`` for a message that is not a JSON
        object or too long, ``OSError`` (``TimeoutError``) from the socket or at the deadline.
        Descriptors that arrive are added to :attr:`fds` (the caller owns them)."""
        while (message := self.next_message()) is None:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no whole message before the deadline")
                self._sock.settimeout(left)
            if not self.receive():
                return None
        return message

    def receive(self) -> bool:
        """One receive from the socket (it blocks unless the socket is readable or has a
        timeout); ``False`` at end of stream. Raises ``ValueError`` when the buffered message
        grows past :data:`MAX_MESSAGE_BYTES`, ``OSError`` from the socket."""
        data, fds, _flags, _addr = socket.recv_fds(self._sock, 65536, 8)
        self.fds.extend(fds)
        if not data:
            return False
        self._buffer += data
        if len(self._buffer) > MAX_MESSAGE_BYTES and b"\n" not in self._buffer:
            raise ValueError("message too long")
        return True

    def next_message(self) -> dict[str, Any] | None:
        """A whole message already received, or ``None`` when none is complete yet. Raises
        ``ValueError`` for one that is not a JSON object (malformed, invalid UTF-8, nested too
        deeply for the parser)."""
        if b"\n" not in self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            value = json.loads(line)
        except RecursionError:  # deep nesting: not a ValueError, and it ended the daemon
            raise ValueError("a message nested too deeply") from None
        if not isinstance(value, dict):
            raise ValueError("a message must be a JSON object")
        return value
