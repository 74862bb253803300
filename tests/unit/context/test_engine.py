"""The context engine against the scripted Messages-API server (real SDK)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from lsp_agent.context.compaction import Trigger, pairing_problems
from lsp_agent.context.engine import CompactionError, ContextEngine, ContextState
from lsp_agent.context.tokens import Observed
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.limits import limits_for
from lsp_agent.testing.scenario import expecting, reply, scenario
from lsp_agent.testing.scripted import ScriptedServer

from .test_clearing import session


@pytest.fixture
async def server() -> AsyncIterator[ScriptedServer]:
    srv = ScriptedServer(
        scenario=scenario(
            reply("Goal: g.", expect=expecting(last_user_contains="CONTEXT CHECKPOINT"))
        )
    )
    await srv.start()
    yield srv
    await srv.stop()


def engine(server: ScriptedServer, **kw: object) -> ContextEngine:
    return ContextEngine(
        model=AnthropicModel(api_key="k", base_url=server.base_url, max_retries=0),
        model_name="scripted-20k",
        limits=limits_for("scripted-20k"),
        state=ContextState(prompts=["do it"]),
        **kw,  # type: ignore[arg-type]
    )


async def test_pre_compact_hook_blocks_and_nothing_is_sent(server: ScriptedServer) -> None:
    async def block(trigger: Trigger, focus: str) -> str | None:
        assert trigger == "manual" and focus == "f"
        return "not now"

    eng = engine(server, pre_compact=block)
    with pytest.raises(CompactionError, match="not now"):
        await eng.compact(
            system=("s",),
            tools=(),
            messages=session(3),
            trigger="manual",
            max_tokens=100,
            focus="f",
        )
    assert server.requests == []
    assert eng.state.boundaries == []


async def test_clearing_first_avoids_a_summary(server: ScriptedServer) -> None:
    eng = engine(server)
    history = session(30)  # ~30k tokens of results in a 20k window
    eng.state.observed = Observed(messages=len(history) - 1, tokens=18_000)
    prepared = await eng.prepare(system=("s",), tools=(), messages=history, max_tokens=2000)
    assert prepared.boundary is None and prepared.cleared > 0
    assert server.requests == []
    assert pairing_problems(prepared.messages) == []


async def test_compaction_calls_post_hook_with_summary(server: ScriptedServer) -> None:
    seen: list[tuple[str, str]] = []

    async def post(trigger: Trigger, summary: str) -> None:
        seen.append((trigger, summary))

    eng = engine(server, post_compact=post, working_set=lambda: '<working-set><file path="a">')
    boundary, messages = await eng.compact(
        system=("s",), tools=(), messages=session(3), trigger="manual", max_tokens=100
    )
    assert seen == [("manual", "Goal: g.")]
    assert boundary.files == 1 and boundary.prompts_kept == 1
    assert "do it" in messages[0].text() and "Goal: g." in messages[0].text()
    assert eng.state.summary_usage.output_tokens > 0
    server.assert_done()


async def test_scripted_route_answers_summaries_without_consuming_steps() -> None:
    from lsp_agent.testing.scenario import Route, Scenario

    route = Route(
        expect=expecting(last_user_contains="CONTEXT CHECKPOINT"),
        response=reply("Summary.").response,  # type: ignore[arg-type]
    )
    srv = ScriptedServer(scenario=Scenario(name="r", steps=(), routes=(route,)))
    await srv.start()
    try:
        eng = engine(srv)
        for _ in range(2):
            _, messages = await eng.compact(
                system=("s",), tools=(), messages=session(3), trigger="manual", max_tokens=100
            )
            assert "Summary." in messages[0].text()
        srv.assert_done()
        assert [e.step for e in srv.exchanges] == [-1, -1]
    finally:
        await srv.stop()
