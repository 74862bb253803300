"""The LSP scenarios whose message logs are kept as golden files.

The real server runs in a subprocess; the test's editor (the e2e suite's :class:`Editor`)
drives it, and a recording client protocol keeps every JSON-RPC message as it crossed the
wire, per direction. The two directions are kept apart because their interleaving depends on
scheduling; within one direction the order is the server's (or the editor's) behaviour.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import (
    Scenario,
    ScriptedUsage,
    Step,
    ToolResultExpect,
    expecting,
    scenario,
    tool_use,
)
from lsp_agent.testing.scenario import reply as _reply
from lsp_agent.testing.scripted import ScriptedServer, scripted_env
from tests.e2e.conftest import (
    PRESETS,
    REPO_ROOT,
    SERVER_COMMAND,
    WAIT_S,
    AgentClientProtocol,
    Editor,
    _register_handlers,
)
from tests.golden.normalise import normaliser

USAGE = ScriptedUsage(input_tokens=100, output_tokens=10)
ALLOW_ONCE = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


def reply(*content: Any, **options: Any) -> Step:
    """A scripted reply with fixed usage."""
    return _reply(*content, usage=USAGE, **options)


class RecordingProtocol(AgentClientProtocol):
    """The e2e client protocol, keeping each message exactly as it was on the wire."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.received: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []

    def structure_message(self, data: dict[str, Any]) -> Any:
        # pygls calls this as json's object_hook: for every object, innermost first; only an
        # envelope has "jsonrpc", and its nested objects are still plain dicts at that point.
        if "jsonrpc" in data:
            self.received.append(copy.deepcopy(data))
        return super().structure_message(data)

    def _send_data(self, data: Any) -> None:
        if data:
            self.sent.append(json.loads(json.dumps(data, default=self._serialize_message)))
        super()._send_data(data)


def _make_client() -> LanguageClient:
    client = LanguageClient(protocol_cls=RecordingProtocol, converter_factory=default_converter)
    register_lsp_features(client)
    return client


async def _until(condition: Callable[[], bool]) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), WAIT_S)


@dataclass(frozen=True, kw_only=True)
class LspCase:
    """One editor session: the model's steps and what the editor does."""

    name: str
    preset: str
    steps: Callable[[], Scenario]
    drive: Callable[[Editor], Awaitable[None]]


# ---- the scenarios ---------------------------------------------------------------------------


def _edit_unsaved_steps() -> Scenario:
    return scenario(
        reply(tool_use("Read", {"file_path": "{{root}}/emoji.py"}, id="toolu_read")),
        reply(
            tool_use(
                "Edit",
                {
                    "file_path": "{{root}}/emoji.py",
                    "old_string": "name = '🎉 old'",
                    "new_string": "name = '🎉 new 🚀'",
                },
                id="toolu_edit",
            )
        ),
        reply(tool_use("Read", {"file_path": "{{root}}/emoji.py"}, id="toolu_reread")),
        reply("Renamed."),
    )


async def _edit_unsaved(editor: Editor) -> None:
    path = editor.root / "emoji.py"
    path.write_bytes(b"greeting = 'hi'\nname = 'old'\n")
    editor.open(path)
    editor.type_text(path, "greeting = 'hi 😀'\nname = '🎉 old'\n")  # never saved
    await editor.prompt(await editor.new_session(), "rename old to new")


def _bash_rejected_steps() -> Scenario:
    return scenario(
        reply(tool_use("Bash", {"command": "touch sentinel.txt"}, id="toolu_1")),
        reply("ok"),
    )


async def _bash_rejected(editor: Editor) -> None:
    editor.permission = lambda _p: {
        "outcome": {"outcome": "selected", "optionId": "reject_once", "feedback": "not today"}
    }
    await editor.prompt(await editor.new_session(), "make a file")


def _allow_always_steps() -> Scenario:
    return scenario(
        reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")),
        reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_2")),
        reply("done"),
    )


async def _allow_always_project(editor: Editor) -> None:
    editor.permission = lambda _p: {
        "outcome": {"outcome": "selected", "optionId": "allow_always", "scope": "project"}
    }
    await editor.prompt(await editor.new_session(), "make a file twice")


def _cancel_request_steps() -> Scenario:
    return scenario(
        reply(tool_use("Read", {"file_path": "{{root}}/notes.txt"}, id="toolu_read")),
        reply(
            "Reading done; now I will think about this for a long while.",
            expect=expecting(tool_results=[ToolResultExpect(is_error=False)]),
            stall_after_events=4,
        ),
        reply("Fresh start.", expect=expecting(last_user_contains="second prompt")),
    )


async def _cancel_request(editor: Editor) -> None:
    (editor.root / "notes.txt").write_text("some notes\n")
    session = await editor.new_session()
    params = {"sessionId": session, "prompt": [{"type": "text", "text": "first prompt"}]}
    pending = editor.client.protocol.send_request(methods.SESSION_PROMPT, params, msg_id="p-1")
    await editor.wait_for_update(
        lambda u: (
            u["update"]["sessionUpdate"] == "agent_message_chunk"
            and "Reading done" in u["update"]["content"]["text"]
        )
    )
    editor.client.cancel_request(types.CancelParams(id="p-1"))
    with contextlib.suppress(JsonRpcRequestCancelled):
        await asyncio.wait_for(asyncio.wrap_future(pending), WAIT_S)
    await editor.scripted.wait_for_disconnect(timeout_s=WAIT_S)
    await editor.prompt(session, "second prompt")


def _session_cancel_steps() -> Scenario:
    return scenario(
        reply(
            tool_use("Read", {"file_path": "{{root}}/a.py"}, id="toolu_read"),
            tool_use(
                "Edit",
                {"file_path": "{{root}}/a.py", "old_string": "x = 1", "new_string": "x = 2"},
                id="toolu_edit",
            ),
        ),
        reply("Starting over.", expect=expecting(last_user_contains="try again")),
    )


async def _session_cancel(editor: Editor) -> None:
    path = editor.root / "a.py"
    path.write_text("x = 1\n")
    editor.open(path)

    def never_answer(_params: dict[str, Any]) -> asyncio.Future[dict[str, Any]]:
        return asyncio.get_running_loop().create_future()

    editor.permission = never_answer
    session = await editor.new_session()
    first = asyncio.ensure_future(editor.prompt(session, "change x"))
    await _until(lambda: bool(editor.permission_requests))
    editor.client.protocol.notify(methods.SESSION_CANCEL, {"sessionId": session})
    await asyncio.wait_for(first, WAIT_S)
    await _until(lambda: bool(editor.cancels_received))
    # The editor's answer to the withdrawn request goes out before the next prompt.
    protocol = editor.client.protocol
    assert isinstance(protocol, RecordingProtocol)
    withdrawn = editor.permission_requests[0]
    await _until(lambda: any("error" in m for m in protocol.sent) or withdrawn is None)
    editor.permission = lambda _p: ALLOW_ONCE
    await editor.prompt(session, "try again")


def _closed_file_steps() -> Scenario:
    return scenario(
        reply(tool_use("Read", {"file_path": "{{root}}/win.txt"}, id="toolu_read")),
        reply(
            tool_use(
                "Edit",
                {"file_path": "{{root}}/win.txt", "old_string": "b = 2", "new_string": "b = 3"},
                id="toolu_edit",
            )
        ),
        reply(
            tool_use(
                "Write",
                {"file_path": "{{root}}/new dir/new.txt", "content": "fresh\n"},
                id="toolu_write",
            )
        ),
        reply("Done."),
    )


async def _closed_file(editor: Editor) -> None:
    (editor.root / "win.txt").write_bytes(b"a = 1\r\nb = 2\r\nc = \xc3\xa9\r\n")
    await editor.prompt(await editor.new_session(), "bump b")


_PUBLISH = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS

VSCODE, NEOVIM = "visual_studio_code", "neovim@v0.11.0"

CASES: list[LspCase] = [
    LspCase(
        name="edit_unsaved_buffer_vscode",
        preset=VSCODE,
        steps=_edit_unsaved_steps,
        drive=_edit_unsaved,
    ),
    LspCase(
        name="edit_unsaved_buffer_neovim",
        preset=NEOVIM,
        steps=_edit_unsaved_steps,
        drive=_edit_unsaved,
    ),
    LspCase(
        name="bash_permission_rejected",
        preset=VSCODE,
        steps=_bash_rejected_steps,
        drive=_bash_rejected,
    ),
    LspCase(
        name="bash_allow_always_saved_to_project",
        preset=VSCODE,
        steps=_allow_always_steps,
        drive=_allow_always_project,
    ),
    LspCase(
        name="cancel_request_mid_stream",
        preset=VSCODE,
        steps=_cancel_request_steps,
        drive=_cancel_request,
    ),
    LspCase(
        name="session_cancel_withdraws_permission",
        preset=VSCODE,
        steps=_session_cancel_steps,
        drive=_session_cancel,
    ),
    LspCase(
        name="closed_files_written_on_disk_neovim",
        preset=NEOVIM,
        steps=_closed_file_steps,
        drive=_closed_file,
    ),
]


# ---- running one -----------------------------------------------------------------------------


def _files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes().decode("utf-8", errors="replace")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


async def run_case(case: LspCase, tmp: Path) -> dict[str, Any]:
    """Run ``case`` against a fresh server on ``tmp/"my ws é"``; returns its normalised
    transcript: both directions of the LSP traffic, the model's requests, the editor's buffers
    and the files on disk afterwards."""
    root = tmp / "my ws é"
    root.mkdir()
    home = tmp / "home"
    home.mkdir()
    scripted = ScriptedServer(scenario=case.steps(), variables={"root": str(root)})
    model_url = await scripted.start()
    env = scripted_env(model_url, model="claude-test")
    env["HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    config = ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=_make_client, server_env=env
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    protocol = client.protocol
    assert isinstance(protocol, RecordingProtocol)
    editor = Editor(client=client, scripted=scripted, root=root, preset=case.preset)
    _register_handlers(editor)
    try:
        options = {
            "lspAgent": {
                "clientCapabilities": {
                    "saveDocuments": PRESETS[case.preset]["save_documents"],
                    "reloadDocuments": True,
                }
            }
        }
        result = await asyncio.wait_for(
            client.initialize_session(
                types.InitializeParams(
                    capabilities=client_capabilities(case.preset),
                    workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                    initialization_options=options,
                )
            ),
            WAIT_S,
        )
        editor.encoding = str(result.capabilities.position_encoding or "utf-16")
        await case.drive(editor)
        await asyncio.wait_for(client.shutdown_session(), WAIT_S)
    finally:
        await client.stop()
        await scripted.stop()
    norm = normaliser(root=root, tmp=tmp, model_url=model_url)
    published = [m for m in protocol.received if m.get("method") == _PUBLISH]
    others = [m for m in protocol.received if m.get("method") != _PUBLISH]
    transcript = {
        "client_to_server": protocol.sent,
        # The server's requests (permission prompts, edits, saves) are sent by the tool that
        # needs them, while its notifications go through the session's update stream; the two
        # orders are behaviour, their interleaving is scheduling.
        "server_requests": [m for m in others if "method" in m and "id" in m],
        "server_notifications_and_responses": [
            m for m in others if not ("method" in m and "id" in m)
        ],
        # Diagnostics of settings files follow file watching, so their place among the other
        # messages (and how often an unchanged report repeats) depends on timing.
        "published_diagnostics": [
            json.loads(params)
            for params in sorted({json.dumps(m["params"], sort_keys=True) for m in published})
        ],
        "model_requests": [
            {k: v for k, v in body.items() if k not in ("system", "tools")}
            for body in scripted.requests
        ],
        "model_failures": scripted.failures,
        "model_unconsumed_steps": scripted.unconsumed(),
        "editor_buffers": {uri: doc.text for uri, doc in sorted(editor.docs.items())},
        "files": _files(root),
    }
    return dict(norm.data(transcript))
