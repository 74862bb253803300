"""Idle memory: ten finished sessions, closed with ``lspAgent/session/close``, leave nothing
behind in the server — its open file descriptors are back where they were and no object that
belongs to a session is still alive.

The real server runs under a small wrapper (test code only; the server has no introspection
request): a thread in the server process waits for a request file, runs the cyclic garbage
collector and writes how many objects of each session-scoped class are alive. File
descriptors are counted from ``/proc/<pid>/fd``. No timings are asserted.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import reply, scenario

from .conftest import VSCODE_ONLY, WAIT_S, Editor, Launch

SESSIONS = 10

PER_SESSION = (
    "lsp_agent.sessions.session.Session",
    "lsp_agent.context.engine.ContextEngine",
    "lsp_agent.model.anthropic.AnthropicModel",
    "anthropic.AsyncAnthropic",
    "lsp_agent.permissions.engine.PermissionEngine",
    "lsp_agent.workspace.workspace.Workspace",
    "lsp_agent.checkpoints.recorder.Checkpoints",
    "lsp_agent.sessions.recording.Recorder",
    "lsp_agent.hooks.runner.HookRunner",
    "lsp_agent.context.memory.store.MemoryStore",
)
"""Classes a session owns one of (or more); none may outlive the session."""

PER_FOLDER = ("lsp_agent.mcp.service.McpService",)
"""Shared by the sessions of a folder (the MCP servers' pool): kept, but never one per
session."""

PROBE = """
import gc, json, sys, threading, time
from pathlib import Path

answer = Path(sys.argv[1])
ask = answer.with_suffix(".ask")
watched = set(json.loads(sys.argv[2]))


def count() -> None:
    gc.collect()
    found = dict.fromkeys(watched, 0)
    for obj in gc.get_objects():
        kind = type(obj)
        name = f"{kind.__module__}.{kind.__qualname__}"
        if name in found:
            found[name] += 1
    partial = answer.with_suffix(".partial")
    partial.write_text(json.dumps(found))
    partial.replace(answer)


def watch() -> None:
    while True:
        if ask.exists():
            ask.unlink()
            count()
        time.sleep(0.02)


threading.Thread(target=watch, name="test-probe", daemon=True).start()
from lsp_agent.lsp.server import serve

raise SystemExit(serve())
"""


class Probe:
    """Asks the wrapped server how many objects of each watched class are alive."""

    def __init__(self, folder: Path) -> None:
        self.answer = folder / "live.json"
        self.watched = (*PER_SESSION, *PER_FOLDER)

    def command(self) -> list[str]:
        return [sys.executable, "-c", PROBE, str(self.answer), json.dumps(self.watched)]

    async def live(self) -> dict[str, int]:
        self.answer.unlink(missing_ok=True)
        self.answer.with_suffix(".ask").touch()
        async with asyncio.timeout(WAIT_S):
            while not self.answer.exists():
                await asyncio.sleep(0.02)
        counts: dict[str, int] = json.loads(self.answer.read_text())
        return counts


def _fds(editor: Editor) -> int:
    server = editor.client._server
    assert server is not None
    return len(os.listdir(f"/proc/{server.pid}/fd"))


async def _finished_session(editor: Editor, i: int) -> str:
    session = await editor.new_session()
    result = await editor.prompt(session, f"question {i}")
    assert result["stopReason"] == "end_turn"
    return session


@VSCODE_ONLY
async def test_closed_sessions_leave_no_fds_and_no_live_session_objects(
    launch: Launch, tmp_path: Path
) -> None:
    probe = Probe(tmp_path)
    warm_up = 1
    editor = await launch(
        scenario(*(reply(f"answer {i}") for i in range(warm_up + SESSIONS)), name="idle"),
        server_command=probe.command(),
    )
    # The first session loads the SDK and opens the log and the data folder: count after it.
    for i in range(warm_up):
        first = await _finished_session(editor, i)
        assert await editor.request(methods.SESSION_CLOSE, {"sessionId": first}) == {}
    fds_idle = _fds(editor)
    idle = await probe.live()
    assert all(idle[name] == 0 for name in PER_SESSION), idle

    sessions = [await _finished_session(editor, warm_up + i) for i in range(SESSIONS)]
    busy = await probe.live()
    # The probe sees what it should: every open session and what it holds.
    assert busy["lsp_agent.sessions.session.Session"] == SESSIONS, busy
    assert busy["lsp_agent.context.engine.ContextEngine"] >= SESSIONS, busy
    assert _fds(editor) > fds_idle  # each open session holds its model connection

    for session in sessions:
        assert await editor.request(methods.SESSION_CLOSE, {"sessionId": session}) == {}
    after = await probe.live()
    leaked = {name: after[name] for name in PER_SESSION if after[name]}
    assert leaked == {}, leaked
    assert all(after[name] <= max(idle[name], 1) for name in PER_FOLDER), (idle, after)
    assert _fds(editor) == fds_idle
    editor.scripted.assert_done()
