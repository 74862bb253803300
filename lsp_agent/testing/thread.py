"""The scripted Messages-API server on its own thread, for synchronous tests and the demo."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

from lsp_agent.testing.scenario import Scenario
from lsp_agent.testing.scripted import Exchange, Responder, ScriptedServer


class ScriptedServerThread:
    """A :class:`ScriptedServer` on its own thread and event loop, for synchronous code.

    ``with ScriptedServerThread(scenario=...) as server:`` starts it; ``server.base_url`` is the
    endpoint; leaving the block stops it (it does not call :meth:`assert_done`). Inspection
    mirrors :class:`ScriptedServer` and is safe from the calling thread.
    """

    def __init__(
        self,
        *,
        scenario: Scenario,
        variables: Mapping[str, str] | None = None,
        port: int = 0,
        start_timeout_s: float = 10.0,
        responder: Responder | None = None,
    ) -> None:
        self.server = ScriptedServer(
            scenario=scenario, variables=variables, port=port, responder=responder
        )
        self._start_timeout_s = start_timeout_s
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def start(self) -> str:
        """Start the thread and the server; returns the base URL. Raises what the server's
        start raised, or ``TimeoutError`` after ``start_timeout_s`` seconds."""
        self._thread = threading.Thread(target=self._run, name="scripted-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(self._start_timeout_s):
            raise TimeoutError("the scripted server did not start")
        if self._error is not None:
            raise self._error
        return self.server.base_url

    def stop(self) -> None:
        """Stop the server and join its thread (idempotent)."""
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # loop already closed
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            try:
                await self.server.start()
            except BaseException as exc:
                self._error = exc
                self._ready.set()
                return
            self._ready.set()
            try:
                await self._stop.wait()
            finally:
                await self.server.stop()

        asyncio.run(main())

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return self.server.base_url

    @property
    def requests(self) -> list[Any]:
        """See :attr:`ScriptedServer.requests`."""
        return self.server.requests

    @property
    def exchanges(self) -> list[Exchange]:
        """See :attr:`ScriptedServer.exchanges`."""
        return self.server.exchanges

    @property
    def failures(self) -> list[str]:
        """See :attr:`ScriptedServer.failures`."""
        return self.server.failures

    @property
    def disconnects(self) -> list[int]:
        """See :attr:`ScriptedServer.disconnects`."""
        return self.server.disconnects

    def open_gate(self, name: str) -> None:
        """See :meth:`ScriptedServer.open_gate` (safe from any thread). Raises
        ``RuntimeError`` when the server is not running."""
        if self._loop is None:
            raise RuntimeError("the scripted server is not running")
        self._loop.call_soon_threadsafe(self.server.open_gate, name)

    def unconsumed(self) -> list[int]:
        """See :meth:`ScriptedServer.unconsumed`."""
        return self.server.unconsumed()

    def assert_done(self) -> None:
        """See :meth:`ScriptedServer.assert_done`."""
        self.server.assert_done()
