"""The ``--verbose`` line of a background request says it is one (the real SDK against the
scripted Messages-API server)."""

from __future__ import annotations

import io

from lsp_agent.headless.responses import ResponseLog, TimedModel
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.background import complete_text
from lsp_agent.sessions.titles import title_request
from lsp_agent.testing.scenario import reply, scenario
from lsp_agent.testing.scripted import ScriptedServer


async def test_a_title_request_is_marked_as_made_in_the_background() -> None:
    server = ScriptedServer(
        scenario=scenario(reply("Done."), background={"title": [reply("Fix the adder")]})
    )
    base_url = await server.start()
    err = io.StringIO()
    model = TimedModel(
        AnthropicModel(api_key="k", base_url=base_url, max_retries=0),
        log=ResponseLog(model="claude-test"),
        err=err,
        verbose=True,
    )
    try:
        request = title_request("claude-test", "fix the adder please")
        await complete_text(model, request.model_copy(update={"background": "title"}))
        await complete_text(model, request)
    finally:
        await model.aclose()
        await server.stop()
    title, turn = err.getvalue().splitlines()
    assert title.startswith("[model] #1 claude-test (title, in the background): 200 end_turn")
    assert turn.startswith("[model] #2 claude-test: 200 end_turn")
