"""End-to-end harness: the real server in a subprocess, a pytest-lsp client acting as an
editor, and the scripted Messages-API server on 127.0.0.1 playing the model.

``launch(scenario, ...)`` starts the scripted server with the test's scenario, then the LSP
server (``ANTHROPIC_BASE_URL`` pointing at it) and initializes it with the capabilities of the
parametrised client preset. The returned :class:`Editor` keeps its own copy of every document
it opened and applies ``workspace/applyEdit`` to it the way a real editor does (independent
position arithmetic in the negotiated encoding, then a ``didChange`` with version + 1).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from lsp_agent.lsp import methods, schema
from lsp_agent.lsp.protocol import RawNotification, RawRequest, RawResponse
from lsp_agent.testing.scenario import Scenario
from lsp_agent.testing.scripted import ScriptedServer, scripted_env

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_COMMAND = [
    sys.executable,
    "-c",
    "from lsp_agent.lsp.server import serve; raise SystemExit(serve())",
]
WAIT_S = 15.0
"""Upper bound for any single wait in these tests (s); generous, never a timing assertion."""

PRESETS = {
    # VS Code: utf-16 positions, versioned documentChanges, saves through the client.
    "visual_studio_code": {"save_documents": True},
    # Neovim 0.11: utf-8 positions first, no documentChanges; the server saves by itself.
    "neovim@v0.11.0": {"save_documents": False},
}


class AgentClientProtocol(LanguageClientProtocol):
    """pytest-lsp's protocol with plain-dict envelopes for the ``lspAgent/*`` methods.

    It also checks every ``lspAgent/*`` message the server sends (params of its requests and
    notifications, results of ours) against the protocol's models; the ``launch`` fixture
    fails the test on any problem (:func:`lsp_agent.lsp.schema.wire_problems`).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.wire_problems: list[str] = []
        self._sent: dict[Any, str] = {}

    def send_request(  # type: ignore[override]
        self, method: str, params: Any = None, callback: Any = None, msg_id: Any = None
    ) -> Any:
        if method in methods.CLIENT_REQUESTS:
            msg_id = msg_id if msg_id is not None else str(uuid.uuid4())
            self._sent[msg_id] = method
        return super().send_request(method, params, callback=callback, msg_id=msg_id)

    def handle_message(self, message: Any) -> Any:
        if isinstance(message, RawRequest | RawNotification):
            self.wire_problems += schema.wire_problems(message.method, message.params)
        elif isinstance(message, RawResponse) and message.id in self._sent:
            method = self._sent.pop(message.id)
            self.wire_problems += schema.wire_problems(method, message.result, result=True)
        return super().handle_message(message)

    def get_message_type(self, method: str) -> Any:
        if method in methods.REQUESTS:
            return RawRequest
        if method in methods.NOTIFICATIONS:
            return RawNotification
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> Any:
        if method in methods.CLIENT_REQUESTS:
            return RawResponse
        return super().get_result_type(method)


def make_client() -> LanguageClient:
    client = LanguageClient(protocol_cls=AgentClientProtocol, converter_factory=default_converter)
    register_lsp_features(client)
    return client


# ---- an editor's own text arithmetic (deliberately independent of the server's) ------------

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_UNIT = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def offset_of(text: str, position: types.Position, encoding: str) -> int:
    lines = _LINE.findall(text)
    start = sum(len(line) for line in lines[: position.line])
    if position.line >= len(lines):
        assert position.character == 0, f"position {position} past the end"
        return len(text)
    content = lines[position.line].rstrip("\r\n")
    codec, size = _UNIT[encoding]
    data = content.encode(codec)
    assert position.character * size <= len(data), f"{position} past the end of its line"
    return start + len(data[: position.character * size].decode(codec))


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    spans = sorted(
        (
            (offset_of(text, e.range.start, encoding), offset_of(text, e.range.end, encoding), e)
            for e in edits
        ),
        key=lambda item: item[0],
        reverse=True,
    )
    for start, end, edit in spans:
        text = text[:start] + edit.new_text + text[end:]
    return text


# ---- the fake editor ------------------------------------------------------------------------


@dataclass
class Doc:
    uri: str
    path: Path
    text: str
    version: int


@dataclass
class Editor:
    """The test's editor: documents, answers to server requests, and what it received."""

    client: LanguageClient
    scripted: ScriptedServer
    root: Path
    preset: str
    encoding: str = "utf-16"
    docs: dict[str, Doc] = field(default_factory=dict)
    updates: list[dict[str, Any]] = field(default_factory=list)
    permission_requests: list[dict[str, Any]] = field(default_factory=list)
    saved: list[list[str]] = field(default_factory=list)
    reloads: list[list[str]] = field(default_factory=list)
    applied_edits: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    cancels_received: list[Any] = field(default_factory=list)
    mcp_changes: list[dict[str, Any]] = field(default_factory=list)
    """``lspAgent/mcp/didChange`` notifications received."""
    message_requests: list[types.ShowMessageRequestParams] = field(default_factory=list)
    message_answers: list[str | None] = field(default_factory=list)
    """Titles pressed for ``window/showMessageRequest``, in order (none left: dismissed)."""
    elicit_requests: list[dict[str, Any]] = field(default_factory=list)
    elicit_answers: list[dict[str, Any]] = field(default_factory=list)
    """Answers to ``lspAgent/mcp/elicit``, in order (none left: cancel)."""
    skip_edits: bool = False
    """Answer ``applied: true`` without applying (Neovim skips stale edits silently)."""
    permission: Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]] = (
        lambda _params: {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    )

    # -- documents --

    def uri(self, path: Path) -> str:
        return path.as_uri()

    def open(self, path: Path, text: str | None = None) -> Doc:
        """didOpen ``path`` with its disk text (or ``text``)."""
        if text is None:
            text = path.read_bytes().decode("utf-8")
        doc = Doc(uri=self.uri(path), path=path, text=text, version=1)
        self.docs[doc.uri] = doc
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=doc.uri, language_id="python", version=doc.version, text=text
                )
            )
        )
        return doc

    def type_text(self, path: Path, new_text: str) -> None:
        """The user edits the buffer (not saved): a full-text didChange."""
        doc = self.docs[self.uri(path)]
        doc.text = new_text
        doc.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=doc.uri, version=doc.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)],
            )
        )

    def _apply(self, uri: str, edits: list[types.TextEdit]) -> None:
        doc = self.docs[uri]
        doc.text = apply_text_edits(doc.text, edits, self.encoding)
        doc.version += 1
        # Like an editor: report the edit as incremental changes, last range first.
        changes: list[types.TextDocumentContentChangeEvent] = [
            types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
            for e in sorted(
                edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
            )
        ]
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                content_changes=changes,
            )
        )

    def on_apply_edit(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        self.applied_edits.append(params)
        if self.skip_edits:
            return types.ApplyWorkspaceEditResult(applied=True)
        edit = params.edit
        if edit.document_changes:
            for change in edit.document_changes:
                assert isinstance(change, types.TextDocumentEdit)
                doc = self.docs[change.text_document.uri]
                if change.text_document.version not in (None, doc.version):
                    return types.ApplyWorkspaceEditResult(
                        applied=False, failure_reason="document version mismatch"
                    )
            for change in edit.document_changes:
                assert isinstance(change, types.TextDocumentEdit)
                self._apply(change.text_document.uri, list(change.edits))  # type: ignore[arg-type]
        for uri, edits in (edit.changes or {}).items():
            self._apply(uri, list(edits))
        return types.ApplyWorkspaceEditResult(applied=True)

    def on_save_documents(self, params: dict[str, Any]) -> dict[str, Any]:
        self.saved.append(list(params["uris"]))
        for uri in params["uris"]:
            doc = self.docs[uri]
            doc.path.write_bytes(doc.text.encode("utf-8"))
            self.client.text_document_did_save(
                types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
        return {"saved": list(params["uris"])}

    # -- agent methods --

    async def request(self, method: str, params: Any, msg_id: str | None = None) -> Any:
        return await asyncio.wait_for(
            self.client.protocol.send_request_async(method, params, msg_id=msg_id), WAIT_S
        )

    async def new_session(self, **params: Any) -> str:
        result = await self.request(methods.SESSION_NEW, params)
        return str(result["sessionId"])

    async def prompt(self, session_id: str, text: str, **extra: Any) -> dict[str, Any]:
        blocks = [{"type": "text", "text": text}, *extra.pop("blocks", [])]
        result: dict[str, Any] = await self.request(
            methods.SESSION_PROMPT, {"sessionId": session_id, "prompt": blocks, **extra}
        )
        return result

    async def wait_for_update(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        async def poll() -> dict[str, Any]:
            while True:
                for update in self.updates:
                    if predicate(update):
                        return update
                await asyncio.sleep(0.01)

        return await asyncio.wait_for(poll(), WAIT_S)

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool_result block the server sent to the model, in order."""
        found = []
        for body in self.scripted.requests:
            for message in body["messages"]:
                if message["role"] == "user" and isinstance(message["content"], list):
                    found += [b for b in message["content"] if b.get("type") == "tool_result"]
        return found


def assert_history_consistent(requests: list[dict[str, Any]]) -> None:
    """Every tool_use in every request's history is answered by exactly one tool_result in
    the following user message (the invariant of DESIGN.md §6)."""
    for body in requests:
        messages = body["messages"]
        for index, message in enumerate(messages):
            if message["role"] != "assistant" or not isinstance(message["content"], list):
                continue
            uses = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
            if not uses:
                continue
            assert index + 1 < len(messages), f"tool_use {uses} is the last message"
            answer = messages[index + 1]
            results = [
                b["tool_use_id"]
                for b in answer["content"]
                if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
            assert sorted(results) == sorted(uses), (uses, results)


Launch = Callable[..., Awaitable[Editor]]

VSCODE_ONLY = pytest.mark.parametrize("preset", ["visual_studio_code"], indirect=True)
"""For tests of behaviour that does not depend on the client's capabilities (keeps the suite
fast): run them with one preset only."""


@pytest.fixture(params=list(PRESETS), ids=["vscode", "neovim"])
def preset(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest_asyncio.fixture
async def launch(tmp_path: Path, preset: str) -> AsyncIterator[Launch]:
    """``await launch(scenario)`` → an initialized :class:`Editor` on the workspace folder
    ``tmp_path/"my ws é"`` (a space and a non-ASCII letter, so URIs need quoting); ``{{root}}``
    in the scenario is that folder. ``server_command`` replaces :data:`SERVER_COMMAND` (a test
    that wraps the real server, e.g. to look at its objects)."""
    root = tmp_path / "my ws é"
    root.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    started: list[tuple[Editor, ScriptedServer]] = []

    async def start(
        scenario: Scenario,
        *,
        init_options: dict[str, Any] | None = None,
        server_command: list[str] | None = None,
    ) -> Editor:
        scripted = ScriptedServer(scenario=scenario, variables={"root": str(root)})
        await scripted.start()
        env = scripted_env(scripted.base_url, model="claude-test")
        env["HOME"] = str(home)
        env["LSP_AGENT_DATA_DIR"] = str(tmp_path / "data")  # shared by the test's servers
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        config = ClientServerConfig(
            server_command=server_command or SERVER_COMMAND,
            client_factory=make_client,
            server_env=env,
        )
        client = await config.start()
        assert isinstance(client, LanguageClient)
        editor = Editor(client=client, scripted=scripted, root=root, preset=preset)
        started.append((editor, scripted))
        _register_handlers(editor)
        options = {
            "lspAgent": {
                "clientCapabilities": {
                    "saveDocuments": PRESETS[preset]["save_documents"],
                    "reloadDocuments": True,
                },
                **(init_options or {}),
            }
        }
        result = await asyncio.wait_for(
            client.initialize_session(
                types.InitializeParams(
                    capabilities=client_capabilities(preset),
                    workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                    initialization_options=options,
                )
            ),
            WAIT_S,
        )
        editor.encoding = str(result.capabilities.position_encoding or "utf-16")
        editor.initialize_result = result  # type: ignore[attr-defined]
        return editor

    yield start

    problems: list[str] = []
    for editor, scripted in started:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(editor.client.shutdown_session(), WAIT_S)
        await editor.client.stop()
        await scripted.stop()
        protocol = editor.client.protocol
        assert isinstance(protocol, AgentClientProtocol)
        problems += protocol.wire_problems
    assert not problems, "messages the server sent do not match the protocol schema:\n" + "\n".join(
        problems
    )


def _register_handlers(editor: Editor) -> None:
    client = editor.client

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return editor.on_apply_edit(params)

    @client.feature(methods.SESSION_REQUEST_PERMISSION)
    async def permission(params: dict[str, Any]) -> dict[str, Any]:
        editor.permission_requests.append(params)
        answer = editor.permission(params)
        if asyncio.iscoroutine(answer) or isinstance(answer, asyncio.Future):
            try:
                return await answer  # type: ignore[no-any-return]
            except asyncio.CancelledError:
                editor.cancels_received.append(params)
                raise
        return answer  # type: ignore[return-value]

    @client.feature(methods.WORKSPACE_SAVE_DOCUMENTS)
    def save_documents(params: dict[str, Any]) -> dict[str, Any]:
        return editor.on_save_documents(params)

    @client.feature(methods.SESSION_UPDATE)
    def session_update(params: dict[str, Any]) -> None:
        editor.updates.append(params)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(
        params: types.ShowMessageRequestParams,
    ) -> types.MessageActionItem | None:
        editor.message_requests.append(params)
        title = editor.message_answers.pop(0) if editor.message_answers else None
        return types.MessageActionItem(title=title) if title is not None else None

    @client.feature(methods.MCP_ELICIT)
    def mcp_elicit(params: dict[str, Any]) -> dict[str, Any]:
        editor.elicit_requests.append(params)
        return editor.elicit_answers.pop(0) if editor.elicit_answers else {"action": "cancel"}

    @client.feature(methods.MCP_DID_CHANGE)
    def mcp_did_change(params: dict[str, Any]) -> None:
        editor.mcp_changes.append(params)

    @client.feature(methods.WORKSPACE_DID_CHANGE_FILES)
    def did_change_files(params: dict[str, Any]) -> None:
        editor.reloads.append(list(params["uris"]))
