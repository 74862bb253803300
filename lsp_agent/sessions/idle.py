"""Closing sessions nobody has used for a while (an editor's server lives for days; a session
holds a model connection, a settings store, language-server documents and memory).

A session is idle when no request has named it (:meth:`SessionManager.get`, which every
``lspAgent/session/*`` request goes through) for ``idle_s`` seconds and it is not running a
prompt: a prompt, and the permission prompts it waits on, count as use until the turn ends.
An idle session is closed like ``lspAgent/session/close`` (:meth:`SessionManager.close`:
turn cancelled, ``SessionEnd`` hooks, model client closed, documents released); its
transcript stays, so it is listed as saved and can be loaded again, and the door brings it
back by itself when a request names it again (:meth:`IdleCloser.reopen`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsp_agent.sessions.session import Session, SessionError

if TYPE_CHECKING:
    from lsp_agent.sessions.manager import SessionManager

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class IdleCloser:
    """Closes the sessions of ``manager`` idle for ``idle_s`` seconds (by
    ``manager.last_used``, :func:`time.monotonic` seconds) and remembers them so that a later
    request can reopen them."""

    manager: SessionManager
    idle_s: float
    closed: set[str] = field(default_factory=set)
    """Ids closed for idleness and not reopened since."""

    def check_every_s(self) -> float:
        """How often :meth:`run` looks (seconds): a quarter of the idle time, between 50 ms
        and one minute."""
        return max(0.05, min(60.0, self.idle_s / 4))

    async def run(self) -> None:
        """Sweep until cancelled."""
        while True:
            await asyncio.sleep(self.check_every_s())
            try:
                await self.sweep()
            except Exception:  # one failed close must not stop later sweeps
                log.exception("closing idle sessions failed")

    async def sweep(self) -> list[str]:
        """Close every session idle for ``idle_s`` seconds; their ids."""
        now = time.monotonic()
        closed: list[str] = []
        for session_id, session in list(self.manager.sessions.items()):
            if session.busy:
                self.manager.last_used[session_id] = now  # in use until its turn ends
                continue
            if now - self.manager.last_used.get(session_id, now) < self.idle_s:
                continue
            try:
                await self.manager.close(session_id, reason="other")
            except SessionError:
                continue  # closed meanwhile
            self.closed.add(session_id)
            closed.append(session_id)
            log.info("session %s closed after %.0f s without a request", session_id, self.idle_s)
        return closed

    def reopen(self, session_id: str) -> Session | None:
        """Bring back session ``session_id`` if it was closed for idleness (its history from
        its transcript, nothing replayed: the client still shows it); ``None`` otherwise or
        when it cannot be loaded (the caller reports the unknown id)."""
        if session_id not in self.closed:
            return None
        from lsp_agent.sessions.resume import resume

        try:
            resumed = resume(self.manager, session_id)
        except SessionError as exc:
            log.warning("cannot reopen idle-closed session %s: %s", session_id, exc)
            return None
        self.closed.discard(session_id)
        log.info("session %s reopened after closing for idleness", session_id)
        return resumed.session
