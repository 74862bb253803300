"""Cancellation: ``$/cancelRequest`` on the prompt, ``lspAgent/session/cancel``, and the
history the next prompt sends (every tool_use answered)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use

from .conftest import VSCODE_ONLY, WAIT_S, Launch, assert_history_consistent


async def test_cancel_request_mid_stream_then_next_prompt(launch: Launch) -> None:
    editor = await launch(
        scenario(
            reply(tool_use("Read", {"file_path": "{{root}}/notes.txt"}, id="toolu_read")),
            reply(
                "Reading done; now I will think about this for a long while.",
                expect=expecting(tool_results=[ToolResultExpect(is_error=False)]),
                stall_after_events=4,
            ),
            reply("Fresh start.", expect=expecting(last_user_contains="second prompt")),
        )
    )
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
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(asyncio.wrap_future(pending), WAIT_S)
    await editor.scripted.wait_for_disconnect(timeout_s=WAIT_S)

    result = await editor.prompt(session, "second prompt")
    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert_history_consistent(editor.scripted.requests)


async def test_session_cancel_withdraws_the_permission_prompt(launch: Launch) -> None:
    editor = await launch(
        scenario(
            reply(
                tool_use("Read", {"file_path": "{{root}}/a.py"}, id="toolu_read"),
                tool_use(
                    "Edit",
                    {"file_path": "{{root}}/a.py", "old_string": "x = 1", "new_string": "x = 2"},
                    id="toolu_edit",
                ),
            ),
            reply(
                "Starting over.",
                expect=expecting(
                    last_user_contains="try again",
                    tool_results=[
                        ToolResultExpect(is_error=False),
                        ToolResultExpect(is_error=True, contains="Interrupted"),
                    ],
                ),
            ),
        )
    )
    path = editor.root / "a.py"
    path.write_text("x = 1\n")
    editor.open(path)

    def never_answer(_params: dict[str, Any]) -> asyncio.Future[dict[str, Any]]:
        return asyncio.get_running_loop().create_future()

    editor.permission = never_answer
    session = await editor.new_session()
    first = asyncio.ensure_future(editor.prompt(session, "change x"))

    async def prompt_shown() -> None:
        while not editor.permission_requests:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(prompt_shown(), WAIT_S)
    editor.client.protocol.notify(methods.SESSION_CANCEL, {"sessionId": session})

    result = await asyncio.wait_for(first, WAIT_S)
    assert result["stopReason"] == "cancelled"

    async def withdrawn() -> None:
        while not editor.cancels_received:
            await asyncio.sleep(0.01)

    # The server withdrew its pending permission request with $/cancelRequest.
    await asyncio.wait_for(withdrawn(), WAIT_S)
    assert editor.docs[path.as_uri()].text == "x = 1\n"

    editor.permission = lambda _p: {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    result = await editor.prompt(session, "try again")
    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert_history_consistent(editor.scripted.requests)


@VSCODE_ONLY
async def test_progress_cancel_cancels_the_turn(launch: Launch) -> None:
    editor = await launch(
        scenario(reply("I will think about this for a long while.", stall_after_events=4))
    )
    session = await editor.new_session()
    first = asyncio.ensure_future(editor.prompt(session, "go"))
    await editor.wait_for_update(lambda u: u["update"]["sessionUpdate"] == "agent_message_chunk")
    (token,) = [token for token, reports in editor.client.progress_reports.items() if reports]

    editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))

    result = await asyncio.wait_for(first, WAIT_S)
    assert result["stopReason"] == "cancelled"
    reports = editor.client.progress_reports[token]
    assert reports[-1].kind == "end" and reports[-1].message == "cancelled"
    editor.scripted.assert_done()


@VSCODE_ONLY
async def test_unanswered_permission_times_out_as_cancelled(launch: Launch) -> None:
    editor = await launch(
        scenario(
            reply(
                tool_use("Read", {"file_path": "{{root}}/a.py"}, id="toolu_read"),
                tool_use(
                    "Edit",
                    {"file_path": "{{root}}/a.py", "old_string": "x = 1", "new_string": "x = 2"},
                    id="toolu_edit",
                ),
            ),
            reply(
                "Nobody answered.",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=False),
                        ToolResultExpect(is_error=True, contains="cancelled"),
                    ]
                ),
            ),
        ),
        init_options={"permissionTimeoutMs": 200},
    )
    path = editor.root / "a.py"
    path.write_text("x = 1\n")
    editor.open(path)
    editor.permission = lambda _p: asyncio.get_running_loop().create_future()

    result = await editor.prompt(await editor.new_session(), "change x")

    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert editor.docs[path.as_uri()].text == "x = 1\n"

    async def withdrawn() -> None:
        while not editor.cancels_received:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(withdrawn(), WAIT_S)
