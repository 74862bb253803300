"""The ``--verbose`` line of a background request says it is one, and the run's garbage
collector, paused for start-up, runs again from the first answer (the real SDK against the
scripted Messages-API server)."""

from __future__ import annotations

import gc
import io

from lsp_agent.headless.responses import ResponseLog, TimedModel, pause_collector
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


async def test_the_collector_paused_for_start_up_runs_again_from_the_first_answer() -> None:
    server = ScriptedServer(scenario=scenario(reply("Done.")))
    base_url = await server.start()
    model = TimedModel(
        AnthropicModel(api_key="k", base_url=base_url, max_retries=0),
        log=ResponseLog(model="claude-test"),
        err=io.StringIO(),
        verbose=False,
    )
    frozen = gc.get_freeze_count()
    pause_collector()
    try:
        assert not gc.isenabled()
        done = await complete_text(model, title_request("claude-test", "hello"))
        assert done.text == "Done."
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen  # start-up's objects are never examined again
    finally:
        gc.enable()
        gc.unfreeze()
        await model.aclose()
        await server.stop()
