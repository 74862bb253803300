"""The scripted server itself: expectations, bookkeeping, endpoints, variables, loading."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from lsp_agent.model.types import Message, ResponseDone, ToolResultBlock, ToolUseBlock
from lsp_agent.testing.scenario import (
    Scenario,
    ScenarioError,
    ToolResultExpect,
    bundled_scenarios,
    error,
    expecting,
    load_scenario,
    parse_scenario,
    reply,
    scenario,
    tool_use,
)
from lsp_agent.testing.thread import ScriptedServerThread
from lsp_agent.testing.wire import check_expect
from tests.unit.model.conftest import TEST_KEY, MakeModel, StartServer, collect, simple_request


def _body(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 1000, "messages": list(messages), **extra}


TOOL_TURN = {
    "role": "user",
    "content": [
        {"type": "tool_result", "tool_use_id": "a", "content": "3 passed"},
        {
            "type": "tool_result",
            "tool_use_id": "b",
            "content": [{"type": "text", "text": "1 FAILED"}],
            "is_error": True,
        },
    ],
}


def test_check_expect_accepts_a_matching_request() -> None:
    body = _body(
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        TOOL_TURN,
        tools=[{"name": "Read"}, {"name": "Bash"}],
        system=[{"type": "text", "text": "You are lsp-agent."}],
        stream=True,
    )
    want = expecting(
        tools_include=["Bash"],
        last_user_contains="FAILED",
        tool_results=[ToolResultExpect(is_error=False), ToolResultExpect(contains="FAILED")],
        max_tokens_at_least=1000,
        system_contains="lsp-agent",
        stream=True,
    )
    assert check_expect(want, body) == []
    assert check_expect(None, body) == []


def test_check_expect_names_every_difference() -> None:
    body = _body({"role": "user", "content": "hello"}, TOOL_TURN, tools=[{"name": "Read"}])
    want = expecting(
        tools_include=["Edit"],
        last_user_contains="needle",
        tool_results=[ToolResultExpect(is_error=True), ToolResultExpect(contains="passed")],
        max_tokens_at_least=2000,
        system_contains="agent",
        stream=True,
    )
    problems = check_expect(want, body)
    assert problems == [
        "tools ['Edit'] not offered (request offers ['Read'])",
        "stream is False, expected True",
        "max_tokens is 1000, expected at least 2000",
        "system prompt lacks 'agent' (system: '')",
        "last user message lacks 'needle' (it reads '3 passed\\n1 FAILED')",
        "tool_result 0 has is_error=False, expected True",
        "tool_result 1 lacks 'passed' (it reads '1 FAILED')",
    ]
    count = check_expect(expecting(tool_results=[]), body)
    assert count == ["last user message has 2 tool_result blocks, expected 0"]


def test_check_expect_looks_for_text_anywhere_in_the_request() -> None:
    body = _body({"role": "user", "content": "hello MARKER-1"}, system="base MARKER-2")
    assert (
        check_expect(expecting(request_contains="MARKER-1", request_lacks="MARKER-3"), body) == []
    )
    assert check_expect(expecting(request_contains="MARKER-2"), body) == []
    assert check_expect(expecting(request_contains="MARKER-3", request_lacks="MARKER-1"), body) == [
        "the request lacks 'MARKER-3'",
        "the request contains 'MARKER-1'",
    ]


async def test_assert_done_reports_unconsumed_steps(
    serve: StartServer, make_model: MakeModel
) -> None:
    steps = scenario(reply("one"), reply("two"), reply("three"), name="three_turns")
    server = await serve(steps)
    await collect(make_model(server.base_url), simple_request())
    assert server.unconsumed() == [1, 2]
    assert server.failures == []
    with pytest.raises(AssertionError) as caught:
        server.assert_done()
    assert "'three_turns'" in str(caught.value)
    assert "step 1 was not consumed" in str(caught.value)
    assert "step 2 was not consumed" in str(caught.value)


async def test_non_streaming_requests_get_a_json_message(serve: StartServer) -> None:
    server = await serve(
        scenario(reply("plain", tool_use("Read", {"file_path": "/a"}), usage=None))
    )
    client = anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=server.base_url, max_retries=0)
    async with client:
        message = await client.messages.create(
            model="claude-test",
            max_tokens=100,
            messages=[{"role": "user", "content": "hi"}],
        )
    assert message.stop_reason == "tool_use"
    assert message.content[0].type == "text"
    assert message.content[0].text == "plain"
    assert message.content[1].type == "tool_use"
    assert message.content[1].id == "toolu_scripted_0_1"
    assert message.content[1].input == {"file_path": "/a"}
    assert message.usage.input_tokens >= 1
    server.assert_done()


async def test_count_tokens_answers_bytes_over_four(serve: StartServer) -> None:
    server = await serve(scenario())
    client = anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=server.base_url, max_retries=0)
    async with client:
        counted = await client.messages.count_tokens(
            model="claude-test", messages=[{"role": "user", "content": "x" * 400}]
        )
    (exchange,) = server.exchanges
    assert exchange.outcome == "count_tokens"
    raw_size = len(json.dumps(exchange.body))
    # The body as sent may differ from our re-serialisation by whitespace only.
    assert abs(counted.input_tokens - raw_size // 4) <= raw_size // 40 + 1
    assert counted.input_tokens > 100
    server.assert_done()


async def test_head_root_is_ok_and_unknown_paths_are_failures(serve: StartServer) -> None:
    server = await serve(scenario())
    async with httpx2.AsyncClient(base_url=server.base_url) as http:
        head = await http.head("/")
        missing = await http.get("/v1/models")
    assert head.status_code == 200
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"
    assert server.failures == ["GET /v1/models: no such endpoint on the scripted server"]


async def test_body_that_is_not_json_is_a_failure(serve: StartServer) -> None:
    server = await serve(scenario(reply("unused")))
    async with httpx2.AsyncClient(base_url=server.base_url) as http:
        answer = await http.post("/v1/messages", content=b"{not json")
    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "invalid_request_error"
    assert len(server.failures) == 1
    assert server.unconsumed() == [0]


async def test_variables_are_substituted_in_answers_and_expectations(
    serve: StartServer, make_model: MakeModel, tmp_path: Path
) -> None:
    steps = scenario(
        reply(tool_use("Read", {"file_path": "{{cwd}}/pkg/a.py", "note": "{{undefined}}"})),
        reply("done", expect=expecting(last_user_contains="{{cwd}}")),
    )
    server = await serve(steps, {"cwd": str(tmp_path)})
    model = make_model(server.base_url)
    first = (await collect(model, simple_request()))[-1]
    assert isinstance(first, ResponseDone)
    (call,) = first.response.message().tool_uses()
    # Unknown placeholders stay as written: scripts may carry template syntax of their own.
    assert call.input == {"file_path": f"{tmp_path}/pkg/a.py", "note": "{{undefined}}"}
    history = (
        Message.user_text("read it"),
        first.response.message(),
        Message(
            role="user",
            content=(
                ToolResultBlock(tool_use_id=call.id, content=f"{tmp_path}/pkg/a.py: 3 lines"),
            ),
        ),
    )
    await collect(model, simple_request(messages=history))
    server.assert_done()


async def test_error_step_retry_after_headers_are_sent(serve: StartServer) -> None:
    server = await serve(scenario(error(429, retry_after_s=2.5), error(529, retry_after_s=0)))
    async with httpx2.AsyncClient(base_url=server.base_url) as http:
        first = await http.post("/v1/messages", json=_body())
        second = await http.post("/v1/messages", json=_body())
    assert first.status_code == 429
    assert first.headers["retry-after"] == "2"
    assert first.headers["retry-after-ms"] == "2500"
    assert first.json()["error"] == {"type": "rate_limit_error", "message": "Scripted error."}
    assert second.status_code == 529
    assert second.headers["retry-after-ms"] == "1"
    assert second.json()["error"]["type"] == "overloaded_error"
    server.assert_done()


async def test_stream_only_step_refuses_a_non_streaming_request(serve: StartServer) -> None:
    server = await serve(scenario(reply("x", stall_after_events=2)))
    async with httpx2.AsyncClient(base_url=server.base_url) as http:
        answer = await http.post("/v1/messages", json=_body())
    assert answer.status_code == 400
    assert "not streaming" in server.failures[0]


async def test_a_gated_answer_waits_until_its_gate_opens(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(scenario(reply("held", gate="go"), reply("free", gate="go")))
    model = make_model(server.base_url)
    held = asyncio.create_task(collect(model, simple_request()))
    while server.unconsumed() == [0, 1]:  # until the request takes its step (then the gate)
        await asyncio.sleep(0.01)
    # A whole exchange with the same server goes through meanwhile; the held answer does not.
    async with httpx2.AsyncClient(base_url=server.base_url) as http:
        assert (await http.head("/")).status_code == 200
    assert not held.done()
    server.open_gate("go")
    first = (await held)[-1]
    assert isinstance(first, ResponseDone) and first.response.message().text() == "held"
    # An open gate stays open.
    second = (await collect(model, simple_request()))[-1]
    assert isinstance(second, ResponseDone) and second.response.message().text() == "free"
    server.assert_done()


async def test_thread_runner_serves_code_outside_its_loop(make_model: MakeModel) -> None:
    steps = scenario(reply(tool_use("Bash", {"command": "ls"}, id="toolu_ls")), reply("listed"))
    with ScriptedServerThread(scenario=steps) as server:
        model = make_model(server.base_url)
        first = (await collect(model, simple_request()))[-1]
        assert isinstance(first, ResponseDone)
        assert first.response.content == (
            ToolUseBlock(id="toolu_ls", name="Bash", input={"command": "ls"}),
        )
        assert server.unconsumed() == [1]
        with pytest.raises(AssertionError, match="step 1 was not consumed"):
            server.assert_done()
        await collect(model, simple_request())
        server.assert_done()
        assert len(server.requests) == 2


def test_bundled_scenarios_load() -> None:
    assert {"hello", "read_then_answer"} <= set(bundled_scenarios())
    for name in bundled_scenarios():
        loaded = load_scenario(name)
        assert loaded.name == name
        assert loaded.steps


def test_scenario_file_errors_name_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps({"name": "bad", "steps": [{"response": {"content": []}, "eror": {}}]}),
        encoding="utf-8",
    )
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(path) in str(caught.value)
    assert "steps.0.eror" in str(caught.value)

    with pytest.raises(ScenarioError, match="exactly one of 'response' and 'error'"):
        parse_scenario(
            json.dumps(
                {"name": "x", "steps": [{"error": {"status": 500}, "response": {"content": []}}]}
            )
        )
    with pytest.raises(ScenarioError, match="not valid JSON"):
        parse_scenario("{", source="inline")
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario(tmp_path / "missing.json")


def test_scenario_json_round_trips_through_the_builders() -> None:
    built = scenario(
        reply("hi", tool_use("Read", {"file_path": "/a"}), delay_ms=5, chunk_chars=3),
        error(529, "Overloaded", retry_after_s=0),
        name="rt",
    )
    assert Scenario.model_validate_json(built.model_dump_json()) == built
