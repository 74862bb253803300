"""Loading the agent after ``initialize`` has been answered.

The server answers ``initialize`` with only pygls, lsprotocol and its own small modules loaded.
After ``initialized`` a background thread imports the rest: first the agent core the door
needs (:data:`CORE_MODULES`: sessions, the loop, the host, the diagnostics door, the code
actions), then pays the search tools' one-time costs (:func:`lsp_agent.tools.warm.warm_search`:
the search sentinel), then imports the model SDK (``anthropic``, the slowest import by far).

Handlers that need the core call :meth:`WarmUp.wait_for_core` before importing it: while the
thread is importing the core the event loop waits for it rather than importing the same modules
concurrently (two threads importing overlapping module graphs can meet Python's import-lock
deadlock detection). The SDK part is never waited for: the first session's model client
imports it when it needs it, and pays only what is left.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Sequence

logger = logging.getLogger(__name__)

CORE_MODULES = (
    "lsp_agent.agent.loop",
    "lsp_agent.sessions.manager",
    "lsp_agent.lsp.host",
    "lsp_agent.lsp.diagnostics_door",
    "lsp_agent.lsp.sessions_door",
    "lsp_agent.lsp.code_actions",
)
"""What the door imports on first use of a session, a document or a code action."""


class WarmUp:
    """The background import of one server; see the module docstring."""

    def __init__(self) -> None:
        self._core_done = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def started(self) -> bool:
        """Whether :meth:`start` ran."""
        return self._thread is not None

    def start(self, *, sdk: bool) -> None:
        """Start importing :data:`CORE_MODULES` (then the SDK when ``sdk``) in a daemon thread.
        A second call does nothing."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._run, args=(CORE_MODULES, sdk), name="lsp-agent-warm-up", daemon=True
        )
        self._thread.start()

    def wait_for_core(self) -> None:
        """Block until the core modules are imported (or failed to), if the thread runs.
        Returns at once when :meth:`start` was never called."""
        if self._thread is not None:
            self._core_done.wait()

    def _run(self, modules: Sequence[str], sdk: bool) -> None:
        warm_search: Callable[[], None] | None = None
        try:
            for name in modules:
                importlib.import_module(name)
            # Imported while handlers wait for the core, so no handler imports it meanwhile.
            from lsp_agent.tools.warm import warm_search
        except Exception:
            # The handler that needs the module imports it again and reports the error there.
            logger.exception("importing the agent core in the background failed")
        finally:
            self._core_done.set()
        if warm_search is not None:
            warm_search()  # the search sentinel etc.: not in the first Glob or Grep turn
        if not sdk:
            return
        try:
            from lsp_agent.model.anthropic import warm_up

            warm_up()
        except Exception:
            logger.exception("importing the model SDK failed")
