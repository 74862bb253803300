"""``lsp-agent serve --daemon`` (opt-in): while the editor's language server runs, a warm daemon
serves the terminal's ``run -p``, so a user with the editor open gets the warm start without
running ``lsp-agent daemon start`` themselves.

The language server cannot fork runs itself: it runs threads (the stdin reader, the import
warm-up), and a process must be single-threaded when it forks. So it starts the per-user daemon
(:func:`lsp_agent.cli.bg.start_daemon`, on a thread: the daemon imports the SDK before it
answers, and the editor's ``initialize`` must not wait for that), with a long idle timeout, and
stops it when the server exits. A daemon that already answered when the server started is the
user's (or another editor's) and is left running; so is one still starting when the server
exits (it ends after its idle timeout). ``daemon stop`` lets the daemon's background runs
finish first.

Imported only with ``--daemon``: standard library and the daemon's client.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from lsp_agent.daemon import client

EDITOR_DAEMON_IDLE_S = 8 * 3600
"""Idle timeout of a daemon started by the language server (seconds): it is stopped when the
server exits; this bounds its life only when the server dies without exiting."""


@dataclass(kw_only=True)
class EditorDaemon:
    """The daemon one language server started, if any (see the module doc)."""

    environ: Mapping[str, str]
    thread: threading.Thread | None = None
    pid: int | None = None
    """The pid of the daemon this server started, once it answers; ``None`` otherwise."""
    _done: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        """Start a daemon on a thread unless one answers now (or the platform has none);
        returns at once."""
        if not client.supported() or client.status(self.environ) is not None:
            self._done.set()
            return
        self.thread = threading.Thread(
            target=self._start, name="lsp-agent-editor-daemon", daemon=True
        )
        self.thread.start()

    def _start(self) -> None:
        from lsp_agent.cli.bg import start_daemon

        try:
            code = start_daemon(EDITOR_DAEMON_IDLE_S, environ=self.environ, quiet=True)
            info = client.status(self.environ) if code == 0 else None
            self.pid = int(info["pid"]) if info is not None else None
        finally:
            self._done.set()

    def stop(self) -> None:
        """Stop the daemon this server started, if it answers with the same pid; never
        waits for its runs to end."""
        if not self._done.is_set() or self.pid is None:
            return
        info = client.status(self.environ)
        if info is not None and info.get("pid") == self.pid:
            with contextlib.suppress(OSError):
                client.stop(self.environ, timeout_s=0)
