"""The LSP door's side of diagnostics: settings, the editor bridge, the overlay for managed
servers, fix suggestions, and what sessions need (a verifying host, the language-server tools).

The server creates the :class:`DiagnosticsDoor` on first use, with
``initializationOptions.lspAgent.diagnostics`` as validated at ``initialize`` (see
:mod:`lsp_agent.diagnostics.config`); the
:class:`~lsp_agent.diagnostics.service.DiagnosticsService` is created on first use, with the
client's workspace folders as roots. Editor buffers are forwarded to managed servers that
already hold the document; bridged diagnostics (``lspAgent/diagnostics/didChange``) go into
the versioned store, converted from the negotiated position encoding. Nothing here blocks the
event loop: managed servers start in the background on first need.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pydantic import ValidationError
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from lsp_agent.agent.env import AgentConfig
from lsp_agent.diagnostics.config import DiagnosticsSettings
from lsp_agent.diagnostics.managed import text_digest
from lsp_agent.diagnostics.model import Diagnostic, Report
from lsp_agent.diagnostics.positions import PositionEncoding
from lsp_agent.diagnostics.service import BridgeRejectedError, DiagnosticsService
from lsp_agent.diagnostics.suggest import Suggestion, SuggestionEngine, model_fix
from lsp_agent.lsp.params import DiagnosticsDidChangeParams
from lsp_agent.protocol.events import ContentItem, TextContent, ToolCall, ToolCallUpdate

if TYPE_CHECKING:
    from lsp_agent.lsp.server import AgentLanguageServer

logger = logging.getLogger(__name__)


class DiagnosticsDoor:
    """See the module docstring. Event-loop only."""

    def __init__(
        self, *, server: AgentLanguageServer, settings: DiagnosticsSettings | None = None
    ) -> None:
        self.server = server
        self.settings = DiagnosticsSettings()
        self.configured = False
        self.configure(settings)
        self._service: DiagnosticsService | None = None
        self._suggestions: SuggestionEngine | None = None
        self.last_session: str | None = None
        """The session that most recently started a turn (suggestions are shown there)."""

    # ---- configuration -------------------------------------------------------------------------

    def configure(self, settings: DiagnosticsSettings | None) -> None:
        """Adopt the validated ``initializationOptions.lspAgent.diagnostics`` (``None``: the
        client sent none; the defaults stay and the agent's own ``verify`` is kept). The
        server validates them at ``initialize`` (a bad field fails it with -32602)."""
        if settings is None:
            return
        self.settings = settings
        self.configured = True

    @property
    def service(self) -> DiagnosticsService:
        """The diagnostics service (created on first use, with the workspace folders)."""
        if self._service is None:
            roots = self.server.workspace_roots() or [Path.cwd()]
            self._service = DiagnosticsService(settings=self.settings, roots=roots)
            self._service.store.add_listener(self._on_report)
        return self._service

    @property
    def suggestions(self) -> SuggestionEngine | None:
        """The suggestion engine, when suggestions are enabled."""
        if self._suggestions is None and self.settings.suggestions.enabled:
            self._suggestions = SuggestionEngine(
                config=self.settings.suggestions,
                compute=self._compute_fix,
                on_ready=self._suggestion_ready,
            )
        return self._suggestions

    def agent_config(self, config: AgentConfig) -> AgentConfig:
        """``config`` with the ``verify`` settings of the client, when it sent any."""
        if not self.configured:
            return config
        return dataclasses.replace(config, verify=self.settings.verify)

    async def shutdown(self) -> None:
        """Stop suggestions and every managed server (bounded)."""
        if self._suggestions is not None:
            self._suggestions.close()
        if self._service is not None:
            await self._service.shutdown()

    # ---- editor documents ----------------------------------------------------------------------

    def _path(self, uri: str) -> Path | None:
        fs_path = to_fs_path(uri)
        return Path(fs_path) if fs_path is not None else None

    @property
    def encoding(self) -> PositionEncoding:
        """The position encoding negotiated with the client."""
        value = str(self.server.workspace.position_encoding or "utf-16")
        return value if value in ("utf-8", "utf-16", "utf-32") else "utf-16"  # type: ignore[return-value]

    def opened(self, doc: TextDocument) -> None:
        """``didOpen``: share the buffer with managed servers that hold the document."""
        path = self._path(doc.uri)
        if path is None:
            return
        self.service.editor_changed(path, doc.source, doc.version)
        if self.suggestions is not None and doc.version is not None:
            self.suggestions.document_changed(path, doc.version, doc.source, None)

    def changed(self, doc: TextDocument, params: types.DidChangeTextDocumentParams) -> None:
        """``didChange`` (already applied to ``doc``): forward the text, cancel fix jobs in
        the edited lines."""
        path = self._path(doc.uri)
        if path is None:
            return
        self.service.editor_changed(path, doc.source, doc.version)
        engine = self.suggestions
        if engine is not None and doc.version is not None:
            lines: list[tuple[int, int]] | None = []
            for change in params.content_changes:
                if isinstance(change, types.TextDocumentContentChangePartial):
                    assert lines is not None
                    lines.append((change.range.start.line, change.range.end.line))
                else:
                    lines = None
                    break
            engine.document_changed(path, doc.version, doc.source, lines)

    def closed(self, uri: str) -> None:
        """``didClose``."""
        path = self._path(uri)
        if path is None:
            return
        if self._suggestions is not None:
            self._suggestions.forget(path)
        if self._service is not None:
            self._service.editor_closed(path)

    def _open_document(self, path: Path) -> TextDocument | None:
        return self.server.host.documents.find(self.server.workspace, path)

    # ---- the bridge ----------------------------------------------------------------------------

    def bridge(self, raw: Any) -> None:
        """``lspAgent/diagnostics/didChange``: store the editor's diagnostics of a document.

        Bad input is logged and dropped (a notification has no answer): malformed params, a
        URI that is not a local file, a version older than the buffer's. Ranges past the end
        of the document are clamped.
        """
        try:
            params = DiagnosticsDidChangeParams.model_validate(raw)
        except ValidationError as exc:
            logger.warning("ignored lspAgent/diagnostics/didChange: %s", exc.errors()[0]["msg"])
            return
        path = self._path(params.uri)
        if path is None:
            logger.warning("ignored diagnostics for %s: not a file URI", params.uri)
            return
        doc = self._open_document(path)
        text: str | None = None
        if doc is not None and doc.version is not None and params.version is not None:
            if params.version < doc.version:
                logger.info(
                    "ignored diagnostics for %s version %s: the buffer is at version %s",
                    path,
                    params.version,
                    doc.version,
                )
                return
            if params.version == doc.version:
                text = doc.source
        try:
            report = self.service.bridge_report(
                path=path,
                version=params.version,
                diagnostics=params.diagnostics,
                text=text,
                encoding=self.encoding,
            )
        except BridgeRejectedError as exc:
            logger.info("%s", exc)
            return
        if report.invalid or report.truncated:
            logger.warning(
                "diagnostics for %s: skipped %d malformed and %d beyond the limit of %d",
                path,
                report.invalid,
                report.truncated,
                self.settings.max_per_report,
            )
        clamped = sum(1 for d in report.diagnostics if d.clamped)
        if clamped:
            logger.info("diagnostics for %s: %d ranges past the end were clamped", path, clamped)

    # ---- suggestions ---------------------------------------------------------------------------

    def current_diagnostics(self, path: Path) -> tuple[list[Diagnostic], TextDocument | None]:
        """Every stored diagnostic computed for the buffer's current text, from every channel."""
        doc = self._open_document(path)
        if doc is None or self._service is None:
            return [], doc
        digest = text_digest(doc.source)
        found: list[Diagnostic] = []
        for channel in self._service.store.channels(path):
            report = self._service.store.find(path, channel, digest=digest, version=doc.version)
            if report is not None:
                found.extend(report.diagnostics)
        return found, doc

    def _on_report(self, report: Report) -> None:
        engine = self.suggestions
        if engine is None:
            return
        diagnostics, doc = self.current_diagnostics(report.path)
        if doc is None or doc.version is None or report.digest != text_digest(doc.source):
            return
        engine.diagnostics_changed(report.path, doc.version, doc.source, diagnostics)

    async def _compute_fix(self, request: Any) -> str | None:
        sessions = self.server.sessions
        model = sessions.model_factory()
        try:
            compute = model_fix(model=model, model_name=sessions.config.model)
            return await compute(request)
        finally:
            await model.aclose()

    def _suggestion_ready(self, suggestion: Suggestion) -> None:
        logger.info("fix suggestion ready for %s: %s", suggestion.path, suggestion.title)
        session_id = self.last_session
        if session_id is None:
            return
        tool_call_id = f"suggestion_{suggestion.id}"
        where = f"{suggestion.path.name}:{suggestion.diagnostic.line + 1}"
        text = (
            f"{suggestion.title}\n\nReplace:\n{suggestion.old}\n\nwith:\n{suggestion.new}\n\n"
            "Offered as a quick fix; nothing was applied."
        )
        self.server.host.emit(
            session_id,
            ToolCall(
                tool_call_id=tool_call_id,
                title=f"Fix suggestion ready: {where}",
                kind="think",
                status="in_progress",
                content=(ContentItem(content=TextContent(text=text)),),
            ),
        )
        self.server.host.emit(
            session_id,
            ToolCallUpdate(
                tool_call_id=tool_call_id,
                status="completed",
                raw_output={
                    "suggestion": {
                        "id": suggestion.id,
                        "path": str(suggestion.path),
                        "line": suggestion.diagnostic.line + 1,
                        "message": suggestion.diagnostic.message,
                        "aiGenerated": True,
                    }
                },
            ),
        )
