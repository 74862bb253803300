"""The demo's editor: an LSP client (pygls ``LanguageClient``) that drives ``lsp-agent serve``
the way VS Code or Neovim would.

It keeps open documents in memory (:class:`~lsp_agent.demo.buffers.Buffer`), answers the
server's requests (``workspace/applyEdit``, ``lspAgent/workspace/saveDocuments``,
``lspAgent/session/requestPermission``) and shows ``lspAgent/session/update`` notifications in
the transcript. Method names and payloads follow docs/protocol.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path, to_fs_path

from lsp_agent import __version__
from lsp_agent.demo.buffers import Buffer, EditError, TextEditSpec, apply_edits
from lsp_agent.demo.transcript import Transcript
from lsp_agent.lsp import methods
from lsp_agent.lsp.protocol import RawNotification, RawRequest, RawResponse

logger = logging.getLogger(__name__)

_Handler = TypeVar("_Handler", bound=Callable[..., Any])

Approver = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Answers one ``requestPermission`` params object with its result (``{"outcome": ...}``)."""


class DemoClientProtocol(LanguageServerProtocol):
    """Client-side protocol: the ``lspAgent/*`` messages stay plain JSON (dicts), as on the
    server side, instead of pygls' namedtuples."""

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """Raw envelopes for the server's custom requests and notifications."""
        if method in methods.SERVER_REQUESTS:
            return RawRequest
        if method in methods.SERVER_NOTIFICATIONS:
            return RawNotification
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """Answers to our custom requests arrive as dicts."""
        if method in methods.CLIENT_REQUESTS:
            return RawResponse
        return super().get_result_type(method)


class DemoLanguageClient(LanguageClient):
    """pygls' client with access to the server process (to read its stderr)."""

    @property
    def server_process(self) -> asyncio.subprocess.Process | None:
        """The server subprocess started by ``start_io``, if any."""
        return self._server


def uri_for(path: Path) -> str:
    """The ``file:`` URI of an absolute path."""
    uri: str | None = from_fs_path(str(path))
    if uri is None:
        raise ValueError(f"cannot make a file URI of {path}")
    return uri


def _path_of(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path is not None else None


def _spec(edit: types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit) -> TextEditSpec:
    new_text = edit.snippet.value if isinstance(edit, types.SnippetTextEdit) else edit.new_text
    return TextEditSpec(
        start_line=edit.range.start.line,
        start_character=edit.range.start.character,
        end_line=edit.range.end.line,
        end_character=edit.range.end.character,
        new_text=new_text,
    )


def _handles(client: LanguageClient, method: str) -> Callable[[_Handler], _Handler]:
    """``client.feature(method)`` with a type (pygls' client decorator is untyped)."""

    def register(handler: _Handler) -> _Handler:
        client.feature(method)(handler)
        return handler

    return register


class Editor:
    """The editor side of the demo: buffers and the handlers of server-to-client messages.

    ``root`` is the project directory (absolute). ``approve`` decides permission prompts.
    ``on_verification`` receives every verification verdict the server reports
    (``rawOutput.verification`` of a ``tool_call_update``).
    Every handler runs on the client's event loop (single writer of :attr:`buffers`).
    """

    def __init__(
        self,
        *,
        client: DemoLanguageClient,
        root: Path,
        transcript: Transcript,
        approve: Approver,
        on_verification: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.client = client
        self.root = root
        self.transcript = transcript
        self.approve = approve
        self.on_verification = on_verification
        self.buffers: dict[str, Buffer] = {}
        self.permission_requests: list[dict[str, Any]] = []
        self.applied_edits = 0
        self.saves = 0
        self._register()

    # ---- the editor's own actions ----

    def open(self, path: Path) -> Buffer:
        """Open ``path`` (read from disk) and tell the server (``didOpen``, version 1)."""
        uri = uri_for(path)
        buffer = Buffer(uri=uri, text=path.read_text(encoding="utf-8"), version=1)
        self.buffers[uri] = buffer
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=buffer.language_id, version=1, text=buffer.text
                )
            )
        )
        return buffer

    def type_text(self, buffer: Buffer, *, line: int, text: str) -> None:
        """Insert ``text`` at the start of ``line`` without saving (``didChange`` with an
        incremental change), as a user typing would."""
        spec = TextEditSpec(
            start_line=line, start_character=0, end_line=line, end_character=0, new_text=text
        )
        buffer.text = apply_edits(buffer.text, [spec])
        buffer.version += 1
        buffer.dirty = True
        position = types.Position(line=line, character=0)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=buffer.uri, version=buffer.version
                ),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=position, end=position), text=text
                    )
                ],
            )
        )

    def save(self, buffer: Buffer) -> None:
        """Write the buffer to disk and send ``didSave`` (with the text)."""
        path = _path_of(buffer.uri)
        if path is None:
            raise ValueError(f"not a file URI: {buffer.uri}")
        path.write_text(buffer.text, encoding="utf-8", newline="")
        buffer.dirty = False
        self.saves += 1
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=buffer.uri), text=buffer.text
            )
        )

    def relative(self, uri: str) -> str:
        """``uri`` as a path relative to the project root (for display)."""
        path = _path_of(uri)
        if path is None:
            return uri
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    # ---- handlers of the server's messages ----

    def _register(self) -> None:
        self._register_agent_handlers()
        self._register_lsp_handlers()

    def _register_agent_handlers(self) -> None:
        """The requests and notifications of the agent's own protocol (and applyEdit)."""
        client = self.client

        @_handles(client, types.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            return self._apply_edit(params)

        @_handles(client, methods.WORKSPACE_SAVE_DOCUMENTS)
        def save_documents(params: Any) -> dict[str, Any]:
            return self._save_documents(params)

        @_handles(client, methods.SESSION_REQUEST_PERMISSION)
        async def request_permission(params: Any) -> dict[str, Any]:
            self.permission_requests.append(params)
            return await self.approve(params)

        @_handles(client, methods.SESSION_UPDATE)
        def session_update(params: Any) -> None:
            self._session_update(params)

        @_handles(client, methods.WORKSPACE_DID_CHANGE_FILES)
        def files_changed(params: Any) -> None:
            self._reload_clean_buffers()

    def _register_lsp_handlers(self) -> None:
        """The standard LSP requests and notifications a server may send its editor."""
        client = self.client

        @_handles(client, types.WINDOW_SHOW_MESSAGE)
        def show_message(params: types.ShowMessageParams) -> None:
            if params.type in (types.MessageType.Error, types.MessageType.Warning):
                self.transcript.warning(f"server: {params.message}")

        @_handles(client, types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            logger.debug("server log: %s", params.message)

        @_handles(client, types.WINDOW_SHOW_DOCUMENT)
        def show_document(params: types.ShowDocumentParams) -> types.ShowDocumentResult:
            return types.ShowDocumentResult(success=True)

        @_handles(client, types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def progress_create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @_handles(client, types.CLIENT_REGISTER_CAPABILITY)
        def register_capability(params: types.RegistrationParams) -> None:
            return None

        @_handles(client, types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[Any]:
            return [None for _ in params.items]

        @_handles(client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: types.PublishDiagnosticsParams) -> None:
            return None

    def _session_update(self, params: Any) -> None:
        if isinstance(params, dict) and isinstance(params.get("update"), dict):
            update = params["update"]
            self.transcript.update(update)
            verification = (update.get("rawOutput") or {}).get("verification")
            if isinstance(verification, dict) and self.on_verification is not None:
                self.on_verification(verification)

    def _apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edit = params.edit
        per_uri: list[tuple[str, int | None, list[TextEditSpec]]] = []
        for change in edit.document_changes or ():
            if not isinstance(change, types.TextDocumentEdit):
                return types.ApplyWorkspaceEditResult(
                    applied=False,
                    failure_reason=f"the demo editor does not support {type(change).__name__}",
                )
            per_uri.append(
                (
                    change.text_document.uri,
                    change.text_document.version,
                    [_spec(e) for e in change.edits],
                )
            )
        for uri, edits in (edit.changes or {}).items():
            per_uri.append((uri, None, [_spec(e) for e in edits]))
        # Check every document first so the edit is all-or-nothing.
        new_texts: list[tuple[str, str]] = []
        for uri, version, specs in per_uri:
            buffer = self.buffers.get(uri)
            if buffer is None:
                path = _path_of(uri)
                if path is None or not path.is_file():
                    return types.ApplyWorkspaceEditResult(
                        applied=False, failure_reason=f"{uri}: no such document"
                    )
                base = path.read_text(encoding="utf-8")
            else:
                if version is not None and version != buffer.version:
                    return types.ApplyWorkspaceEditResult(
                        applied=False,
                        failure_reason=f"{self.relative(uri)} is at version {buffer.version}, "
                        f"the edit was made for version {version}",
                    )
                base = buffer.text
            try:
                new_texts.append((uri, apply_edits(base, specs)))
            except EditError as exc:
                return types.ApplyWorkspaceEditResult(
                    applied=False, failure_reason=f"{self.relative(uri)}: {exc}"
                )
        for uri, text in new_texts:
            self._set_text(uri, text)
        self.applied_edits += 1
        label = f" ({params.label})" if params.label else ""
        names = ", ".join(self.relative(uri) for uri, _ in new_texts)
        self.transcript.editor(f"applied the agent's edit to {names}{label}, not saved yet")
        return types.ApplyWorkspaceEditResult(applied=True)

    def _set_text(self, uri: str, text: str) -> None:
        buffer = self.buffers.get(uri)
        if buffer is None:
            # A file the editor did not have open: open it with the edited text, as VS Code
            # does for workspace edits to closed files.
            path = _path_of(uri)
            if path is None:
                raise ValueError(f"not a file URI: {uri}")
            buffer = self.open(path)
        buffer.text = text
        buffer.version += 1
        buffer.dirty = True
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=buffer.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def _save_documents(self, params: Any) -> dict[str, Any]:
        uris = params.get("uris", []) if isinstance(params, dict) else []
        saved: list[str] = []
        for uri in uris:
            buffer = self.buffers.get(uri)
            if buffer is None:
                continue
            if buffer.dirty:
                self.save(buffer)
                self.transcript.editor(
                    f"saved {self.relative(uri)} (the server asked, before a tool reads the disk)"
                )
            saved.append(uri)
        return {"saved": saved}

    def _reload_clean_buffers(self) -> None:
        for buffer in self.buffers.values():
            if buffer.dirty:
                continue
            path = _path_of(buffer.uri)
            if path is None or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8")
            if text != buffer.text:
                self._set_text(buffer.uri, text)
                buffer.dirty = False
                self.transcript.editor(f"reloaded {self.relative(buffer.uri)} from disk")


def initialize_params(
    root: Path, *, permission_mode: str, diagnostics: dict[str, Any] | None = None
) -> types.InitializeParams:
    """``initialize`` params of a VS Code-like client: UTF-16 positions, versioned
    ``documentChanges``, ``showDocument``, and the ``lspAgent`` options (saveDocuments and
    reloadDocuments implemented; the demo workspace is trusted). ``diagnostics`` becomes
    ``initializationOptions.lspAgent.diagnostics`` (verification; docs/verification.md)."""
    options: dict[str, Any] = {
        "permissionMode": permission_mode,
        "clientCapabilities": {"saveDocuments": True, "reloadDocuments": True},
        "trusted": True,
    }
    if diagnostics is not None:
        options["diagnostics"] = diagnostics
    root_uri = uri_for(root)
    return types.InitializeParams(
        process_id=None,
        client_info=types.ClientInfo(name="lsp-agent-demo", version=__version__),
        root_uri=root_uri,
        workspace_folders=[types.WorkspaceFolder(uri=root_uri, name=root.name)],
        capabilities=types.ClientCapabilities(
            general=types.GeneralClientCapabilities(
                position_encodings=[types.PositionEncodingKind.Utf16]
            ),
            workspace=types.WorkspaceClientCapabilities(
                apply_edit=True,
                workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
                workspace_folders=True,
            ),
            text_document=types.TextDocumentClientCapabilities(
                synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            ),
            window=types.WindowClientCapabilities(
                show_document=types.ShowDocumentClientCapabilities(support=True),
            ),
        ),
        initialization_options={"lspAgent": options},
    )
