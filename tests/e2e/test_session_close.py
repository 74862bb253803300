"""``lspAgent/session/close``: a closed session's turn ends, its processes die, its ids are
unknown afterwards, and many sessions opened and closed leave the server's file descriptors and
memory where they were."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import reply, scenario, tool_use
from tests.procs import live_pids_mentioning

from .conftest import VSCODE_ONLY, WAIT_S, Editor, Launch

LEAK_SESSIONS = 40
"""Sessions opened, prompted and closed in the leak test (each held +1 fd and ~0.85 MB
before close existed)."""

RSS_SLACK_KB_PER_SESSION = 200
"""Allowed RSS growth per closed session (KB): allocator noise, far below the 850 KB a kept
session costs."""


def _server_pid(editor: Editor) -> int:
    server = editor.client._server
    assert server is not None
    return server.pid


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def _live(editor: Editor) -> list[str]:
    """The ids of the sessions the server holds (closed ones may still be listed as saved)."""
    listed = await editor.request(methods.SESSION_LIST, {})
    return [s["sessionId"] for s in listed["sessions"] if s.get("live", True)]


async def _until(predicate: object, what: str) -> None:
    async def poll() -> None:
        while not predicate():  # type: ignore[operator]
            await asyncio.sleep(0.05)

    try:
        await asyncio.wait_for(poll(), WAIT_S)
    except TimeoutError:
        pytest.fail(f"never: {what}")


@VSCODE_ONLY
async def test_close_ends_the_turn_kills_its_command_and_forgets_the_session(
    launch: Launch,
) -> None:
    marker = f"close-marker-{uuid.uuid4().hex[:8]}"
    editor = await launch(
        scenario(
            reply(tool_use("Bash", {"command": f"sleep 60; echo {marker}"}, id="toolu_sleep")),
            reply("never used"),
        )
    )
    session = await editor.new_session(mode="bypassPermissions")
    other = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "run it"))
    await _until(lambda: live_pids_mentioning(marker), "the Bash command started")

    assert await editor.request(methods.SESSION_CLOSE, {"sessionId": session}) == {}

    result = await asyncio.wait_for(turn, WAIT_S)
    assert result["stopReason"] == "cancelled"
    # SIGKILL was sent to the command's group; the kernel ends it asynchronously.
    await _until(lambda: not live_pids_mentioning(marker), "the Bash command was killed")
    assert await _live(editor) == [other]
    for method, params in (
        (methods.SESSION_PROMPT, {"sessionId": session, "prompt": [{"type": "text", "text": "x"}]}),
        (methods.SESSION_CLOSE, {"sessionId": session}),
        (methods.SESSION_SET_MODE, {"sessionId": session, "modeId": "plan"}),
    ):
        with pytest.raises(JsonRpcInvalidParams, match="unknown session id"):
            await editor.request(method, params)
    with pytest.raises(JsonRpcInvalidParams, match="sessionId"):
        await editor.request(methods.SESSION_CLOSE, {})
    # The other session is untouched.
    assert await editor.request(methods.SESSION_CLOSE, {"sessionId": other}) == {}
    assert await _live(editor) == []


@VSCODE_ONLY
async def test_many_sessions_opened_and_closed_leave_fds_and_memory_at_baseline(
    launch: Launch,
) -> None:
    warm_up = 3
    editor = await launch(
        scenario(*(reply(f"answer {i}") for i in range(warm_up + LEAK_SESSIONS)), name="leak")
    )
    pid = _server_pid(editor)

    async def one_session(i: int) -> None:
        session = await editor.new_session()
        result = await editor.prompt(session, f"question {i}")
        assert result["stopReason"] == "end_turn"
        assert await editor.request(methods.SESSION_CLOSE, {"sessionId": session}) == {}

    # The first sessions load the SDK and open the log: measure after them.
    for i in range(warm_up):
        await one_session(i)
    fds_before, rss_before = _fds(pid), _rss_kb(pid)
    for i in range(LEAK_SESSIONS):
        await one_session(warm_up + i)
    fds_after, rss_after = _fds(pid), _rss_kb(pid)

    assert await _live(editor) == []
    assert fds_after == fds_before, (fds_before, fds_after)
    growth = rss_after - rss_before
    print(f"{LEAK_SESSIONS} sessions: fds {fds_before}->{fds_after}", end=", ")
    print(f"RSS KB {rss_before}->{rss_after}")
    assert growth < LEAK_SESSIONS * RSS_SLACK_KB_PER_SESSION, (rss_before, rss_after)
    editor.scripted.assert_done()
