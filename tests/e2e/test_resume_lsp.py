"""Sessions across server restarts over LSP, with both client presets: list, load (replay then
go on), fork, and a server killed with SIGKILL in the middle of a turn."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import expecting, reply, scenario, tool_use

from .conftest import VSCODE_ONLY, WAIT_S, Editor, Launch, assert_history_consistent


async def stop(editor: Editor) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(editor.client.shutdown_session(), WAIT_S)
    await editor.client.stop()


def kinds(updates: list[dict[str, Any]], session_id: str) -> list[str]:
    return [u["update"]["sessionUpdate"] for u in updates if u["sessionId"] == session_id]


async def test_a_session_survives_a_restart_replays_and_forks(launch: Launch) -> None:
    first = await launch(
        scenario(
            reply(tool_use("Read", {"file_path": "{{root}}/notes.txt"}, id="toolu_r")),
            reply("The notes say hello."),
        )
    )
    (first.root / "notes.txt").write_text("hello\n")
    session = await first.new_session(mode="acceptEdits")
    assert (await first.prompt(session, "read notes.txt"))["stopReason"] == "end_turn"
    await stop(first)

    second = await launch(
        scenario(
            reply("Continuing.", expect=expecting(last_user_contains="and now?")),
            reply("Forked answer.", expect=expecting(last_user_contains="other idea")),
        )
    )
    caps = second.initialize_result.capabilities.experimental["lspAgent"]  # type: ignore[attr-defined]
    assert caps["loadSession"] is True
    listed = (await second.request(methods.SESSION_LIST, {}))["sessions"]
    assert [(s["sessionId"], s["title"], s["turns"], s["live"]) for s in listed] == [
        (session, "read notes.txt", 1, False)
    ]

    loaded = await second.request(methods.SESSION_LOAD, {"sessionId": session})
    assert loaded["modes"]["currentModeId"] == "acceptEdits"
    assert {c["name"] for c in loaded["availableCommands"]} >= {"compact", "clear"}
    # Every replayed update arrived before the answer (notifications precede the response).
    replayed = [u["update"] for u in second.updates if u["sessionId"] == session]
    assert [u["sessionUpdate"] for u in replayed] == [
        "user_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ]
    assert replayed[0]["content"]["text"] == "read notes.txt"
    assert replayed[1]["title"].startswith("Read") and replayed[1]["kind"] == "read"
    assert (
        replayed[2]["status"] == "completed"
        and "hello" in replayed[2]["content"][0]["content"]["text"]
    )
    answer_id = replayed[3]["messageId"]

    assert (await second.prompt(session, "and now?"))["stopReason"] == "end_turn"
    sent = second.scripted.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert_history_consistent(second.scripted.requests)

    forked = await second.request(
        methods.SESSION_FORK, {"sessionId": session, "messageId": answer_id}
    )
    fork_id = forked["sessionId"]
    assert fork_id != session
    assert kinds(second.updates, fork_id)[0] == "user_message_chunk"
    assert (await second.prompt(fork_id, "other idea"))["stopReason"] == "end_turn"
    # The fork's history stops at the answer it was taken from.
    assert "and now?" not in str(second.scripted.requests[1]["messages"])
    listed = (await second.request(methods.SESSION_LIST, {}))["sessions"]
    assert {s["sessionId"] for s in listed} == {session, fork_id}
    assert all(s["live"] for s in listed)


@VSCODE_ONLY
async def test_load_and_fork_errors_are_clear(launch: Launch) -> None:
    editor = await launch(scenario(reply("hi")))
    for method, params, expected in [
        (methods.SESSION_LOAD, {"sessionId": "nope"}, "no saved session"),
        (methods.SESSION_LOAD, {}, "sessionId"),
        (methods.SESSION_FORK, {"sessionId": "nope"}, "no saved session"),
    ]:
        try:
            await editor.request(method, params)
        except Exception as exc:
            assert expected in str(exc)
        else:
            raise AssertionError(f"{method} {params} succeeded")
    session = await editor.new_session()
    await editor.prompt(session, "hello")
    try:
        await editor.request(methods.SESSION_FORK, {"sessionId": session, "messageId": "x"})
    except Exception as exc:
        assert "no message 'x'" in str(exc)
    else:
        raise AssertionError("fork from an unknown message succeeded")


@VSCODE_ONLY
async def test_a_server_killed_mid_turn_comes_back_consistent(launch: Launch) -> None:
    first = await launch(
        scenario(reply(tool_use("Bash", {"command": "sleep 60"}, id="toolu_sleep")))
    )
    session = await first.new_session(mode="bypassPermissions")
    turn = asyncio.ensure_future(first.prompt(session, "run the slow thing"))
    await first.wait_for_update(
        lambda u: (
            u["update"].get("status") == "in_progress"
            and u["update"].get("toolCallId") == "toolu_sleep"
        )
    )
    server = first.client._server
    assert server is not None
    os.kill(server.pid, signal.SIGKILL)
    await asyncio.gather(turn, return_exceptions=True)
    await first.client.stop()

    second = await launch(scenario(reply("It was interrupted.")))
    listed = (await second.request(methods.SESSION_LIST, {}))["sessions"]
    assert listed[0]["interrupted"] is True
    loaded = await second.request(methods.SESSION_LOAD, {"sessionId": session})
    # Never restored: bypassPermissions.
    assert loaded["modes"]["currentModeId"] == "default"
    replayed = [u["update"] for u in second.updates if u["sessionId"] == session]
    failed = [u for u in replayed if u.get("status") == "failed"]
    assert [u["toolCallId"] for u in failed] == ["toolu_sleep"]
    assert "interrupted" in replayed[-1]["content"]["text"]
    await second.prompt(session, "what happened?")
    assert_history_consistent(second.scripted.requests)
    last = second.scripted.requests[0]["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and last[0]["tool_use_id"] == "toolu_sleep"


@VSCODE_ONLY
async def test_removing_the_workspace_folder_closes_its_sessions_and_keeps_them(
    launch: Launch,
) -> None:
    from lsprotocol import types

    editor = await launch(scenario(reply("Hello.")))
    session = await editor.new_session()
    await editor.prompt(session, "hi")
    editor.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[],
                removed=[types.WorkspaceFolder(uri=editor.root.as_uri(), name="ws")],
            )
        )
    )

    async def listed() -> list[dict[str, Any]]:
        while True:
            sessions = (await editor.request(methods.SESSION_LIST, {}))["sessions"]
            if not any(s["live"] for s in sessions):
                return list(sessions)
            await asyncio.sleep(0.05)

    sessions = await asyncio.wait_for(listed(), WAIT_S)
    assert [(s["sessionId"], s["live"], s["title"]) for s in sessions] == [(session, False, "hi")]
    # Closed, not lost: it can be loaded again.
    loaded = await editor.request(methods.SESSION_LOAD, {"sessionId": session})
    assert loaded["modes"]["currentModeId"] == "default"
