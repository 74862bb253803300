"""Sessions closed for idleness over LSP (``sessionIdleMinutes``, a small injected interval):
closed with their transcript kept, listed as saved, and back with their history when the
client names them again; with both client presets."""

from __future__ import annotations

import asyncio
import json
import time

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import expecting, reply, scenario

from .conftest import WAIT_S, Launch

IDLE_MINUTES = 0.05  # 3 s; checked every 0.75 s


async def _listed(editor, session_id: str) -> dict:  # type: ignore[no-untyped-def]
    sessions = (await editor.request(methods.SESSION_LIST, {}))["sessions"]
    return next(s for s in sessions if s["sessionId"] == session_id)


async def test_an_idle_session_is_closed_kept_and_reopened_by_its_next_prompt(
    launch: Launch,
) -> None:
    editor = await launch(
        scenario(
            reply("First answer."),
            reply("Second answer.", expect=expecting(last_user_contains="still there?")),
        ),
        init_options={"sessionIdleMinutes": IDLE_MINUTES},
    )
    session = await editor.new_session()
    assert (await editor.prompt(session, "hello"))["stopReason"] == "end_turn"
    untouched = await editor.new_session()
    assert (await _listed(editor, session))["live"] is True

    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        listed = {
            s["sessionId"]: s for s in (await editor.request(methods.SESSION_LIST, {}))["sessions"]
        }
        if not listed[session]["live"] and untouched not in listed:
            break
        await asyncio.sleep(0.2)
    # Closed, transcript kept: listed as saved.
    assert (listed[session]["live"], listed[session]["turns"]) == (False, 1)
    # The session that never prompted left no transcript: closed and gone.
    assert untouched not in listed

    # The client still shows the chat: its next prompt reopens the session with its history.
    assert (await editor.prompt(session, "still there?"))["stopReason"] == "end_turn"
    sent = editor.scripted.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "hello" in json.dumps(sent[0])
    assert (await _listed(editor, session))["live"] is True


async def test_zero_minutes_never_closes(launch: Launch) -> None:
    editor = await launch(scenario(reply("Hi.")), init_options={"sessionIdleMinutes": 0})
    session = await editor.new_session()
    assert (await editor.prompt(session, "hello"))["stopReason"] == "end_turn"
    await asyncio.sleep(4.0)
    assert (await _listed(editor, session))["live"] is True
