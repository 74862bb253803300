"""The diagnostics service of one agent server process: store, managed servers, verifier.

A door creates one :class:`DiagnosticsService` from the settings and its workspace roots,
feeds it what the editor knows (buffer changes, bridged diagnostics) and hands it to the
composition root (:func:`lsp_agent.sessions.compose.build_sessions`), which gives it to every
session's tool context and verification. It is shared by all sessions; it starts managed
servers only when first needed and stops them in :meth:`DiagnosticsService.shutdown`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from lsp_agent.diagnostics.config import DiagnosticsSettings
from lsp_agent.diagnostics.managed import ManagedServer, ServerUnavailableError, text_digest
from lsp_agent.diagnostics.model import EDITOR_CHANNEL, Report, parse_diagnostics
from lsp_agent.diagnostics.positions import PositionEncoding, split_lines
from lsp_agent.diagnostics.store import DiagnosticsStore, StaleReportError
from lsp_agent.diagnostics.verify import Verifier

logger = logging.getLogger(__name__)


class BridgeRejectedError(ValueError):
    """A bridged diagnostics notification was not stored; the message says why."""


class DiagnosticsService:
    """See the module docstring. Event-loop only.

    ``roots`` are the workspace folders given to managed servers; ``clock`` returns monotonic
    seconds (tests may pass a fake).
    """

    def __init__(
        self,
        *,
        settings: DiagnosticsSettings,
        roots: Sequence[Path],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.roots = tuple(roots)
        self.clock = clock
        self.store = DiagnosticsStore(
            max_documents=settings.max_documents, reports_per_source=settings.reports_per_source
        )
        self.servers = tuple(
            ManagedServer(
                config=config,
                roots=self.roots,
                store=self.store,
                max_per_report=settings.max_per_report,
                clock=clock,
            )
            for config in settings.servers
        )
        self.verifier = Verifier(store=self.store, servers=self.servers, clock=clock)
        self.rejected_bridge_reports = 0

    def servers_for(self, path: Path) -> tuple[ManagedServer, ...]:
        """The managed servers whose ``filetypes`` match ``path``."""
        return tuple(s for s in self.servers if s.handles(path))

    def server(self, name: str) -> ManagedServer | None:
        """The managed server called ``name``."""
        return next((s for s in self.servers if s.name == name), None)

    # ---- what the editor tells us -------------------------------------------------------------

    def editor_changed(self, path: Path, text: str, version: int | None) -> None:
        """An editor buffer was opened or changed: remember its version and pass the text to
        managed servers that already have the document open (they share the overlay)."""
        if version is not None:
            self.store.note_editor_version(path, version)
        for server in self.servers_for(path):
            if server.state == "running" and server.synced_digest(path) is not None:
                try:
                    server.sync(path, text)
                except ServerUnavailableError as exc:
                    logger.debug("cannot sync %s to %s: %s", path, server.name, exc)

    def editor_closed(self, path: Path) -> None:
        """An editor buffer was closed (managed servers keep their copy until evicted)."""

    def bridge_report(
        self,
        *,
        path: Path,
        version: int | None,
        diagnostics: Any,
        text: str | None,
        encoding: PositionEncoding,
    ) -> Report:
        """Store diagnostics from the editor bridge (``lspAgent/diagnostics/didChange``).

        ``text`` is the buffer text of ``version`` when the door has it (the current buffer
        has that version): positions are then converted from ``encoding`` and ranges past the
        end of the document clamped, and the report is tagged with the text's digest.
        Raises :class:`BridgeRejectedError` for a version older than one already seen.
        """
        lines = split_lines(text) if text is not None else None
        parsed, truncated, invalid = parse_diagnostics(
            diagnostics[: self.settings.max_per_report * 4]
            if isinstance(diagnostics, list)
            else diagnostics,
            lines=lines,
            encoding=encoding,
            default_source=EDITOR_CHANNEL,
            limit=self.settings.max_per_report,
        )
        dropped = (
            max(0, len(diagnostics) - self.settings.max_per_report * 4)
            if isinstance(diagnostics, list)
            else 0
        )
        report = Report(
            path=path,
            channel=EDITOR_CHANNEL,
            diagnostics=parsed,
            version=version,
            digest=text_digest(text) if text is not None else None,
            received=self.clock(),
            final=False,
            truncated=truncated + dropped,
            invalid=invalid,
        )
        try:
            self.store.put(report)
        except StaleReportError as exc:
            self.rejected_bridge_reports += 1
            raise BridgeRejectedError(str(exc)) from None
        return report

    def release_documents(
        self, paths: Iterable[Path], *, keep: Callable[[Path], bool] = lambda _path: False
    ) -> None:
        """Close ``paths`` in the managed servers that have them open (``didClose``), except
        those ``keep`` holds (e.g. still open in the editor): a closed session's interest."""
        for path in paths:
            if keep(path):
                continue
            for server in self.servers_for(path):
                server.close_document(path)

    # ---- lifecycle -----------------------------------------------------------------------------

    async def shutdown(self, *, timeout: float = 2.0) -> None:
        """Stop every managed server (bounded by ``timeout`` seconds each, in parallel)."""
        await asyncio.gather(
            *(s.shutdown(timeout=timeout) for s in self.servers), return_exceptions=True
        )

    def status(self) -> list[dict[str, Any]]:
        """A JSON summary of the managed servers (state, last error, pid-free)."""
        return [
            {
                "name": s.name,
                "state": s.state,
                "lastError": s.last_error,
                "failures": s.failures,
                "mode": "pull" if s.pull else "push",
            }
            for s in self.servers
        ]
