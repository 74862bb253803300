"""``LspHost``: the core's :class:`Host`, implemented against an LSP editor.

* Reads see the editor's buffers (unsaved text included) for documents the client opened.
* Edits to open documents go out as one ``workspace/applyEdit`` per batch, versioned
  (``documentChanges``) when the client supports it; a buffer that moved on since the agent
  read it is never edited. Application is confirmed by watching the buffer reach the expected
  text. Closed files are written atomically on disk, keeping encoding, BOM and line endings.
* Permission prompts, saves and reload hints are custom requests/notifications
  (docs/protocol.md).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pydantic import ValidationError
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from lsp_agent.lsp import methods
from lsp_agent.lsp.documents import OpenDocuments, read_disk_state
from lsp_agent.lsp.options import DEFAULT_EDIT_CONFIRM_TIMEOUT_MS, DEFAULT_PERMISSION_TIMEOUT_MS
from lsp_agent.lsp.params import RequestPermissionResult, SaveDocumentsResult, SelectedOutcome
from lsp_agent.lsp.progress import TurnProgress
from lsp_agent.lsp.proposals import PendingProposals
from lsp_agent.lsp.protocol import AgentProtocol
from lsp_agent.lsp.textedit import minimal_edit
from lsp_agent.protocol.documents import ApplyResult, FileChange, TextSnapshot
from lsp_agent.protocol.events import SessionUpdate, ToolCall, ToolCallUpdate
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.workspace.textfile import (
    NotTextError,
    StaleChangeError,
    apply_change_to_disk,
    guard_write,
    read_text_file,
    write_text_atomic,
)

logger = logging.getLogger(__name__)

_REJECT = PermissionResponse(outcome="selected", option_id="reject_once")


@dataclass(kw_only=True)
class HostTimeouts:
    """Bounds on waits for the editor, in seconds."""

    permission: float = DEFAULT_PERMISSION_TIMEOUT_MS / 1000
    apply_edit: float = 30.0
    """Answer to ``workspace/applyEdit`` (VS Code may show a confirmation first)."""
    confirm_edit: float = DEFAULT_EDIT_CONFIRM_TIMEOUT_MS / 1000
    """After ``applied: true``, until the buffer holds the edited text."""
    save: float = 30.0
    """Answer to ``lspAgent/workspace/saveDocuments``."""


class LspHost:
    """The Host of every session of one LSP connection. Event-loop only (single writer)."""

    def __init__(self, *, server: LanguageServer) -> None:
        self.server = server
        self.documents = OpenDocuments()
        self.timeouts = HostTimeouts()
        self.client_saves = False
        """The client declared ``clientCapabilities.saveDocuments``."""
        self.progress: dict[str, TurnProgress] = {}
        """The running turn's progress, by session id."""
        self.proposals = PendingProposals()
        """The file changes of open permission prompts, re-checked as the user types."""

    @property
    def protocol(self) -> AgentProtocol:
        """The connection's protocol (always an :class:`AgentProtocol`)."""
        protocol = self.server.protocol
        assert isinstance(protocol, AgentProtocol)
        return protocol

    # ---- reads ---------------------------------------------------------------------------------

    def buffer(self, path: Path) -> TextSnapshot | None:
        """The open buffer at ``path`` (``source="buffer"``, editor version), else ``None``."""
        doc = self._open_document(path)
        if doc is None or doc.version is None:
            return None
        disk = self.documents.disk_state(path)
        return TextSnapshot(
            path=path,
            text=doc.source,
            version=doc.version,
            source="buffer",
            encoding=disk.encoding,
            bom=disk.bom,
        )

    def _open_document(self, path: Path) -> TextDocument | None:
        return self.documents.find(self.server.workspace, path)

    # ---- edits ---------------------------------------------------------------------------------

    async def apply_changes(self, changes: Sequence[FileChange], *, label: str) -> ApplyResult:
        """Apply ``changes``: open buffers through one ``workspace/applyEdit``, other files on
        disk. Every base is checked before anything is changed; the batch is refused (nothing
        applied) if one moved on. See the module docstring and docs/protocol.md."""
        in_editor: list[tuple[FileChange, TextDocument]] = []
        on_disk: list[FileChange] = []
        for change in changes:
            doc = self._open_document(change.path)
            if doc is None:
                problem = _disk_base_problem(change)
                if problem is None:
                    on_disk.append(change)
            else:
                problem = _buffer_base_problem(change, doc)
                in_editor.append((change, doc))
            if problem is not None:
                return ApplyResult(applied=False, failure=problem)

        snapshots: list[TextSnapshot] = []
        if in_editor:
            result = await self._apply_in_editor(in_editor, label=label)
            if not result.applied:
                return result
            snapshots.extend(result.snapshots)
        for change in on_disk:
            try:
                snapshot = apply_change_to_disk(change)
            except StaleChangeError as exc:
                return ApplyResult(applied=False, failure=str(exc), snapshots=tuple(snapshots))
            except (OSError, UnicodeEncodeError) as exc:
                return ApplyResult(
                    applied=False,
                    failure=f"could not write {change.path}: {exc}",
                    snapshots=tuple(snapshots),
                )
            snapshots.append(snapshot)
        return ApplyResult(applied=True, snapshots=tuple(snapshots))

    async def _apply_in_editor(
        self, items: Sequence[tuple[FileChange, TextDocument]], *, label: str
    ) -> ApplyResult:
        encoding = str(self.server.workspace.position_encoding or types.PositionEncodingKind.Utf16)
        versioned = bool(
            get_capability(
                self.server.client_capabilities, "workspace.workspace_edit.document_changes", False
            )
        )
        document_changes: list[types.TextDocumentEdit] = []
        changes: dict[str, list[types.TextEdit]] = {}
        waiters: list[tuple[FileChange, asyncio.Future[int]]] = []
        unchanged: list[TextSnapshot] = []
        for change, doc in items:
            edit = minimal_edit(doc.source, change.new_text, encoding)
            if edit is None:
                snapshot = self.buffer(change.path)
                if snapshot is not None:
                    unchanged.append(snapshot)
                continue
            if versioned:
                document_changes.append(
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(
                            uri=doc.uri, version=doc.version
                        ),
                        edits=[edit],
                    )
                )
            else:
                changes[doc.uri] = [edit]
            waiters.append((change, self.documents.expect(change.path, change.new_text)))
        if not waiters:
            return ApplyResult(applied=True, snapshots=tuple(unchanged))

        edit_params = types.ApplyWorkspaceEditParams(
            edit=types.WorkspaceEdit(document_changes=document_changes)
            if versioned
            else types.WorkspaceEdit(changes=changes),
            label=label,
        )
        try:
            try:
                answer = await self._client_request(
                    types.WORKSPACE_APPLY_EDIT, edit_params, timeout=self.timeouts.apply_edit
                )
            except TimeoutError:
                return ApplyResult(
                    applied=False,
                    failure=f"the editor did not answer workspace/applyEdit within "
                    f"{self.timeouts.apply_edit:g} s; read the file again before retrying",
                )
            except JsonRpcException as exc:
                return ApplyResult(
                    applied=False, failure=f"the editor rejected the edit: {exc.message}"
                )
            if not getattr(answer, "applied", False):
                reason = getattr(answer, "failure_reason", None) or "no reason given"
                return ApplyResult(
                    applied=False,
                    failure=f"the editor did not apply the edit ({reason}); the buffer may "
                    "have changed: read it again",
                )
            done, _ = await asyncio.wait(
                [future for _, future in waiters], timeout=self.timeouts.confirm_edit
            )
            snapshots = list(unchanged)
            for change, future in waiters:
                if future not in done or future.exception() is not None:
                    current = self._open_document(change.path)
                    now = f"version now {current.version}" if current is not None else "closed"
                    return ApplyResult(
                        applied=False,
                        failure=f"the editor reported the edit of {change.path} as applied, "
                        f"but the buffer did not hold the edited text within "
                        f"{self.timeouts.confirm_edit:g} s ({now}); read it again",
                    )
                disk = self.documents.disk_state(change.path)
                snapshots.append(
                    TextSnapshot(
                        path=change.path,
                        text=change.new_text,
                        version=future.result(),
                        source="buffer",
                        encoding=disk.encoding,
                        bom=disk.bom,
                    )
                )
            return ApplyResult(applied=True, snapshots=tuple(snapshots))
        finally:
            for _, future in waiters:
                if not future.done():
                    future.cancel()

    # ---- saving and reloading ------------------------------------------------------------------

    async def save_documents(self, paths: Sequence[Path]) -> dict[Path, str]:
        """Make the disk hold the buffer text of ``paths``: ask the client to save dirty ones
        (``lspAgent/workspace/saveDocuments``, when declared), then write whatever is still
        not on disk ourselves, in the file's existing encoding and BOM — unless the path no
        longer resolves to itself (:func:`~lsp_agent.workspace.textfile.guard_write`). Returns
        the paths that could not be saved (read-only file or folder, full disk, moved path),
        each with the reason; they are logged too."""
        failed: dict[Path, str] = {}
        dirty = [path for path in paths if self._unsaved(path)]
        if not dirty:
            return failed
        if self.client_saves:
            uris = [self.documents.uri_for(path) for path in dirty]
            try:
                raw = await self._client_request(
                    methods.WORKSPACE_SAVE_DOCUMENTS, {"uris": uris}, timeout=self.timeouts.save
                )
                saved = SaveDocumentsResult.model_validate(raw or {}).saved
                logger.debug("client saved %s", saved)
            except (TimeoutError, JsonRpcException, ValidationError) as exc:
                logger.warning("client did not save documents (%s); writing them directly", exc)
        for path in dirty:
            doc = self._open_document(path)
            if doc is None or not self._unsaved(path):
                continue
            disk = self.documents.disk_state(path)
            try:
                # The path may have been swapped for a symlink since the edit was approved
                # (a Bash command ran in between): never follow it out of the checked place.
                guard_write(path)
                write_text_atomic(path, doc.source, encoding=disk.encoding, bom=disk.bom)
            except (StaleChangeError, OSError, UnicodeEncodeError) as exc:
                logger.error("could not save %s: %s", path, exc)
                failed[path] = str(exc)
                continue
            state, _ = read_disk_state(path)
            self.documents.wrote(path, state)
        return failed

    async def files_changed_on_disk(self, paths: Sequence[Path]) -> None:
        """Tell the client (``lspAgent/workspace/didChangeFiles``) which open documents changed
        on disk while their buffer held no unsaved changes, so it reloads them. Buffers with
        unsaved changes are never touched (a warning is logged)."""
        candidates = list(paths) or self.documents.open_paths()
        reload: list[str] = []
        for path in candidates:
            doc = self._open_document(path)
            if doc is None:
                continue
            before = self.documents.disk_state(path)
            now, _ = read_disk_state(path)
            if now.digest == before.digest:
                continue
            buffer_digest = TextSnapshot(path=path, text=doc.source).digest
            if buffer_digest == before.digest:
                reload.append(self.documents.uri_for(path))
            else:
                logger.warning(
                    "%s changed on disk while the editor holds unsaved changes; left as is", path
                )
            self.documents.wrote(path, now)
        if reload:
            self.protocol.notify(methods.WORKSPACE_DID_CHANGE_FILES, {"uris": reload})

    def _unsaved(self, path: Path) -> bool:
        """Whether the open buffer at ``path`` differs from the file on disk right now."""
        doc = self._open_document(path)
        if doc is None:
            return False
        try:
            return read_text_file(path).text != doc.source
        except FileNotFoundError:
            return True
        except (OSError, NotTextError):
            return False

    # ---- permission ----------------------------------------------------------------------------

    async def request_permission(self, request: PermissionRequest) -> PermissionResponse:
        """Ask the client (``lspAgent/session/requestPermission``), bounded by
        ``timeouts.permission``, with the request's ``rule``, ``source``, ``suggestedRules``
        and ``scopes``; the answer's ``scope`` becomes ``PermissionResponse.scope``. No answer
        in time → ``cancelled``; an error or malformed answer → reject. A turn cancel
        withdraws the prompt with ``$/cancelRequest``."""
        tool_call = request.tool_call
        session_id = request.session_id or ""
        wire = tool_call.to_wire()
        self._add_uris(wire)
        reason = request.reason
        unsaved = [p for p in _diff_paths(tool_call) if self._unsaved(p)]
        params: dict[str, Any] = {
            "sessionId": session_id,
            "toolCall": wire,
            "options": [option.to_wire() for option in request.options],
            "reason": reason,
            "suggestedRules": list(request.suggested_rules),
            "suggestedRuleLabels": list(request.suggested_rule_labels),
            "scopes": list(request.scopes),
        }
        if request.rule is not None:
            params["rule"] = request.rule
        if request.source is not None:
            params["source"] = request.source
        if unsaved:
            names = ", ".join(self._display(p) for p in unsaved)
            verb = "has" if len(unsaved) == 1 else "have"
            note = (
                f"{names} {verb} unsaved changes in the editor; the edit applies on top of "
                "them and keeps them."
            )
            params["reason"] = f"{reason.rstrip('. ')}. {note}" if reason else note
            params["_meta"] = {"unsavedBuffers": [self.documents.uri_for(p) for p in unsaved]}
        paths = list(_diff_paths(tool_call))
        key = self.proposals.open(
            session_id, tool_call, labels={path: self._display(path) for path in paths}
        )
        # Once the prompt is out, say at once if the user typed since the change was computed.
        asyncio.get_running_loop().call_soon(self._check_proposals, paths)
        try:
            raw = await self._client_request(
                methods.SESSION_REQUEST_PERMISSION, params, timeout=self.timeouts.permission
            )
        except TimeoutError:
            logger.warning(
                "permission prompt for %r unanswered after %g s",
                tool_call.title,
                self.timeouts.permission,
            )
            return PermissionResponse(outcome="cancelled")
        except JsonRpcException as exc:
            logger.warning("permission prompt failed (%s); treating it as a rejection", exc)
            return _REJECT
        finally:
            self.proposals.close(key)
        try:
            answer = RequestPermissionResult.model_validate(raw)
        except ValidationError as exc:
            logger.warning(
                "malformed permission answer %r (%s); treating it as a rejection", raw, exc
            )
            return _REJECT
        if isinstance(answer.outcome, SelectedOutcome):
            edited = answer.outcome.edited_text
            return PermissionResponse(
                outcome="selected",
                option_id=answer.outcome.option_id,
                feedback=answer.outcome.feedback,
                edited_text={_path_key(k): v for k, v in edited.items()} if edited else None,
                scope=answer.outcome.scope,
            )
        return PermissionResponse(outcome="cancelled")

    def document_changed(self, doc: TextDocument) -> None:
        """``didChange`` of ``doc``: re-check the open prompts' proposals for it and tell the
        client when one went stale (or applies again)."""
        self._check_proposals([p for p in self.proposals.paths() if self._is(p, doc)])

    def _check_proposals(self, paths: Iterable[Path]) -> None:
        for path in paths:
            doc = self._open_document(path)
            if doc is None:
                continue
            for session_id, update in self.proposals.check(path, doc.source, doc.version):
                self.emit(session_id, update)

    def _is(self, path: Path, doc: TextDocument) -> bool:
        found = self._open_document(path)
        return found is not None and found.uri == doc.uri

    # ---- updates -------------------------------------------------------------------------------

    def emit(self, session_id: str, update: SessionUpdate) -> None:
        """Send ``lspAgent/session/update`` (with a ``uri`` next to every ``path``), and show
        tool-call titles in the turn's progress."""
        wire = update.to_wire()
        self._add_uris(wire)
        self.protocol.notify(methods.SESSION_UPDATE, {"sessionId": session_id, "update": wire})
        if isinstance(update, ToolCall | ToolCallUpdate) and update.title:
            progress = self.progress.get(session_id)
            if progress is not None:
                progress.report(update.title)

    def _add_uris(self, wire: dict[str, Any]) -> None:
        for key in ("content", "locations", "proposal"):
            for item in wire.get(key) or ():
                if isinstance(item, dict) and isinstance(item.get("path"), str):
                    item["uri"] = self.documents.uri_for(Path(item["path"]))

    def _display(self, path: Path) -> str:
        """``path`` relative to the workspace folder holding it, else absolute."""
        for folder in self.server.workspace.folders.values():
            root = to_fs_path(folder.uri)
            if root is not None and path.is_relative_to(root):
                return path.relative_to(root).as_posix()
        return str(path)

    async def show_document(self, path: Path) -> str | None:
        """Open ``path`` in the editor, focused (``window/showDocument``, LSP 3.16), when the
        client declared ``window.showDocument.support``. ``None`` when shown, else why not."""
        if not get_capability(
            self.server.client_capabilities, "window.show_document.support", False
        ):
            return "the editor does not support window/showDocument"
        params = types.ShowDocumentParams(uri=path.as_uri(), take_focus=True)
        try:
            result = await self._client_request(
                "window/showDocument", params, timeout=self.timeouts.apply_edit
            )
        except TimeoutError:
            return "the editor did not answer"
        except JsonRpcException as exc:
            return f"the editor answered with an error: {exc}"
        success = (
            result.get("success") if isinstance(result, dict) else getattr(result, "success", None)
        )
        return None if success is True else "the editor did not open it"

    # ---- plumbing ------------------------------------------------------------------------------

    async def _client_request(self, method: str, params: Any, *, timeout: float) -> Any:
        """Send a request to the client and wait at most ``timeout`` seconds.

        Raises ``TimeoutError``, or the client's error as ``JsonRpcException``. On timeout or
        cancellation the request is withdrawn (``$/cancelRequest``) and a late answer ignored.
        """
        msg_id = f"lspAgent-{uuid.uuid4().hex}"
        future = asyncio.wrap_future(self.protocol.send_request(method, params, msg_id=msg_id))
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout=timeout)
        except (TimeoutError, asyncio.CancelledError):
            self.protocol.abandon_request(msg_id)
            raise


def _buffer_base_problem(change: FileChange, doc: TextDocument) -> str | None:
    base = change.base
    if base is None:
        return f"{change.path} is open in the editor; read it before writing it"
    if base.source == "buffer":
        if base.version != doc.version:
            return (
                f"the buffer of {change.path} changed since it was read (version "
                f"{base.version}, now {doc.version}); read it again"
            )
        if base.text != doc.source:
            return f"the buffer of {change.path} changed since it was read; read it again"
        return None
    if base.text != doc.source:
        return (
            f"{change.path} was opened in the editor and its buffer differs from what was "
            "read from disk; read it again"
        )
    return None


def _disk_base_problem(change: FileChange) -> str | None:
    base = change.base
    if base is None:
        return f"{change.path} already exists; read it first" if change.path.exists() else None
    try:
        current = read_text_file(change.path)
    except FileNotFoundError:
        return f"{change.path} was deleted since it was read"
    except (OSError, NotTextError) as exc:
        return f"cannot read {change.path}: {exc}"
    if current.text != base.text:
        what = "was closed in the editor and " if base.source == "buffer" else ""
        return f"{change.path} {what}changed on disk since it was read; read it again"
    return None


def _path_key(uri_or_path: str) -> str:
    """An absolute path string from a ``file:`` URI (or a path, returned as is)."""
    if uri_or_path.startswith("file:"):
        return to_fs_path(uri_or_path) or uri_or_path
    return uri_or_path


def _diff_paths(tool_call: ToolCall) -> Iterable[Path]:
    seen: set[str] = set()
    for item in tool_call.content:
        path = getattr(item, "path", None)
        if isinstance(path, str) and path not in seen:
            seen.add(path)
            yield Path(path)
