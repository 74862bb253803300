"""Session titles the model writes in the background, over LSP: the title reaches the client as
``session_info_update``, ``session/list`` shows it, and a load after a restart replays it.
Background requests are turned on through the editor's settings layer (its ``env``)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from lsp_agent.lsp import methods
from lsp_agent.model.background import BACKGROUND_ENV
from lsp_agent.testing.scenario import expecting, reply, scenario

from .conftest import VSCODE_ONLY, WAIT_S, Editor, Launch

ON = {"settings": {"env": {BACKGROUND_ENV: "1"}}}
PROMPT = "please rename parser.py to parsing.py and fix the imports"


def info_updates(editor: Editor, session: str) -> list[dict[str, Any]]:
    return [
        u["update"]
        for u in editor.updates
        if u["sessionId"] == session and u["update"]["sessionUpdate"] == "session_info_update"
    ]


@VSCODE_ONLY
async def test_the_written_title_reaches_the_client_the_list_and_a_reload(
    launch: Launch,
) -> None:
    asked = expecting(last_user_contains=PROMPT)
    first = await launch(
        scenario(
            reply("Done."), background={"title": [reply("Rename parser module", expect=asked)]}
        ),
        init_options=ON,
    )
    session = await first.new_session()
    assert (await first.prompt(session, PROMPT))["stopReason"] == "end_turn"
    for _ in range(int(WAIT_S * 10)):
        if info_updates(first, session):
            break
        await asyncio.sleep(0.1)
    assert info_updates(first, session) == [
        {"sessionUpdate": "session_info_update", "title": "Rename parser module"}
    ]
    assert first.scripted.background_unconsumed("title") == 0
    assert [e.background for e in first.scripted.exchanges].count("title") == 1
    listed = (await first.request(methods.SESSION_LIST, {}))["sessions"]
    assert [(s["sessionId"], s["title"]) for s in listed] == [(session, "Rename parser module")]
    with contextlib.suppress(Exception):
        await asyncio.wait_for(first.client.shutdown_session(), WAIT_S)
    await first.client.stop()

    second = await launch(scenario(reply("Sure.")), init_options=ON)
    listed = (await second.request(methods.SESSION_LIST, {}))["sessions"]
    assert [(s["sessionId"], s["title"], s["live"]) for s in listed] == [
        (session, "Rename parser module", False)
    ]
    await second.request(methods.SESSION_LOAD, {"sessionId": session})
    replayed = [u["update"] for u in second.updates if u["sessionId"] == session]
    assert replayed[0]["content"]["text"] == PROMPT
    assert replayed[-1] == {"sessionUpdate": "session_info_update", "title": "Rename parser module"}
    # The resumed session keeps its title: its next prompt asks for no other.
    assert (await second.prompt(session, "and the tests?"))["stopReason"] == "end_turn"
    await asyncio.sleep(0.5)
    assert [e.background for e in second.scripted.exchanges] == [None]
