"""Work-done progress for one prompt turn (``$/progress``), when the client supports it.

One progress per prompt: ``begin`` titled ``lsp-agent`` (cancellable) when the turn starts,
``report`` with the current tool call's title, ``end`` with the stop reason. The client's
``window/workDoneProgress/cancel`` on the token cancels the turn, like ``lspAgent/session/cancel``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from concurrent.futures import Future

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

logger = logging.getLogger(__name__)

CREATE_TIMEOUT_S = 5.0
"""How long to wait for the client to acknowledge ``window/workDoneProgress/create`` (s)."""

TITLE = "lsp-agent"


class TurnProgress:
    """The progress of one turn; a no-op when the client lacks ``window.workDoneProgress``
    or did not acknowledge the token."""

    def __init__(self, *, server: LanguageServer, token: str | None) -> None:
        self._server = server
        self._token = token
        self._ended = False

    @classmethod
    async def start(cls, server: LanguageServer, *, on_cancel: Callable[[], None]) -> TurnProgress:
        """Create the token (bounded wait), send ``begin``, and call ``on_cancel`` on the event
        loop if the client cancels the progress."""
        if not get_capability(server.client_capabilities, "window.work_done_progress", False):
            return cls(server=server, token=None)
        token = f"lspAgent/turn/{uuid.uuid4().hex}"
        try:
            await asyncio.wait_for(
                server.work_done_progress.create_async(token), timeout=CREATE_TIMEOUT_S
            )
        except (TimeoutError, Exception) as exc:
            logger.warning("client did not create progress token: %s", exc or type(exc).__name__)
            return cls(server=server, token=None)
        server.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(title=TITLE, cancellable=True, message="Thinking…"),
        )
        loop = asyncio.get_running_loop()

        def cancelled(future: Future[object]) -> None:
            if future.cancelled():
                loop.call_soon_threadsafe(on_cancel)

        server.work_done_progress.tokens[token].add_done_callback(cancelled)
        return cls(server=server, token=token)

    def report(self, message: str) -> None:
        """Show ``message`` (the current tool call's title) in the progress."""
        if self._token is not None and not self._ended:
            self._server.work_done_progress.report(
                self._token, types.WorkDoneProgressReport(message=message)
            )

    def end(self, message: str) -> None:
        """Finish the progress with ``message`` (the stop reason). Idempotent."""
        if self._token is None or self._ended:
            return
        self._ended = True
        self._server.work_done_progress.end(self._token, types.WorkDoneProgressEnd(message=message))
        # Tokens are never reused; drop the cancel future so the table does not grow forever.
        self._server.work_done_progress.tokens.pop(self._token, None)
