"""AnthropicModel failure modes: retries, HTTP errors, broken streams, cancellation."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.base import ModelError
from lsp_agent.model.types import ModelStreamEvent, ResponseDone, TextDelta
from lsp_agent.testing.scenario import SseError, error, expecting, reply, scenario

from .conftest import MakeModel, StartServer, collect, simple_request


async def test_529_then_429_are_retried_until_success(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(
        scenario(
            error(529, "Overloaded", retry_after_s=0),
            error(429, "Slow down", retry_after_s=0),
            reply("finally"),
        )
    )
    events = await collect(make_model(server.base_url, max_retries=2), simple_request())
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.message().text() == "finally"
    assert len(server.requests) == 3
    retry_counts = [e.headers.get("x-stainless-retry-count") for e in server.exchanges]
    assert retry_counts == ["0", "1", "2"]
    server.assert_done()


async def test_persistent_500_names_status_endpoint_and_api_message(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(
        scenario(
            error(500, "database on fire", retry_after_s=0),
            error(500, "database on fire", retry_after_s=0),
        )
    )
    with pytest.raises(ModelError) as caught:
        await collect(make_model(server.base_url, max_retries=1), simple_request())
    err = caught.value
    assert err.status == 500
    assert err.retryable
    assert server.base_url in str(err)
    assert "HTTP 500" in str(err)
    assert "api_error" in str(err)
    assert "database on fire" in str(err)
    server.assert_done()


async def test_bad_request_is_not_retryable(serve: StartServer, make_model: MakeModel) -> None:
    server = await serve(scenario(error(400, "messages: roles must alternate")))
    with pytest.raises(ModelError) as caught:
        await collect(make_model(server.base_url, max_retries=3), simple_request())
    assert caught.value.status == 400
    assert not caught.value.retryable
    assert "roles must alternate" in str(caught.value)
    assert len(server.requests) == 1


async def test_connection_refused_is_a_retryable_model_error(make_model: MakeModel) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on the port once the probe socket is closed.
    base_url = f"http://127.0.0.1:{port}"
    with pytest.raises(ModelError) as caught:
        await collect(make_model(base_url), simple_request())
    assert caught.value.retryable
    assert caught.value.status is None
    assert base_url in str(caught.value)
    assert "Cannot reach" in str(caught.value)
    assert "ConnectionRefusedError" in str(caught.value)


async def test_no_answer_within_the_timeout(serve: StartServer, make_model: MakeModel) -> None:
    server = await serve(scenario(reply("too late", delay_ms=5000)))
    with pytest.raises(
        ModelError, match=r"did not answer within the read timeout of 0\.2 s \(API_TIMEOUT_MS\)"
    ) as caught:
        await collect(make_model(server.base_url, timeout_s=0.2), simple_request())
    assert caught.value.retryable
    assert server.base_url in str(caught.value)


async def test_unexpected_request_is_recorded_and_surfaces_as_model_error(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(
        scenario(reply("never sent", expect=expecting(tools_include=["Edit"], stream=True)))
    )
    with pytest.raises(ModelError) as caught:
        await collect(make_model(server.base_url, max_retries=2), simple_request())
    assert caught.value.status == 400
    assert not caught.value.retryable
    assert "step 0" in str(caught.value)
    assert "['Edit'] not offered" in str(caught.value)
    assert len(server.failures) == 1
    assert "['Edit'] not offered" in server.failures[0]
    assert server.unconsumed() == [0]
    with pytest.raises(AssertionError, match="not offered"):
        server.assert_done()


async def test_request_after_the_script_ends_is_a_failure(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(scenario(reply("only one")))
    model = make_model(server.base_url)
    await collect(model, simple_request())
    with pytest.raises(ModelError, match="after all 1 steps"):
        await collect(model, simple_request())
    assert server.unconsumed() == []
    assert server.failures == [
        "scenario 'inline' step 1: request arrived after all 1 steps were consumed"
    ]


async def test_connection_dropped_mid_stream(serve: StartServer, make_model: MakeModel) -> None:
    server = await serve(scenario(reply("x" * 200, chunk_chars=10, drop_after_events=5)))
    seen: list[ModelStreamEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in make_model(server.base_url).stream(simple_request()):
            seen.append(event)
    assert caught.value.retryable
    assert "broke mid-response" in str(caught.value)
    assert any(isinstance(e, TextDelta) for e in seen)
    assert not any(isinstance(e, ResponseDone) for e in seen)


async def test_stream_ending_before_message_stop(serve: StartServer, make_model: MakeModel) -> None:
    server = await serve(scenario(reply("half an answer", end_after_events=4)))
    with pytest.raises(ModelError, match="ended the stream before message_stop") as caught:
        await collect(make_model(server.base_url), simple_request())
    assert caught.value.retryable
    server.assert_done()


async def test_error_event_mid_stream(serve: StartServer, make_model: MakeModel) -> None:
    server = await serve(
        scenario(reply("partial answer", sse_error=SseError(after_events=4, message="busy")))
    )
    with pytest.raises(ModelError) as caught:
        await collect(make_model(server.base_url), simple_request())
    assert caught.value.status == 529
    assert caught.value.retryable
    assert "overloaded_error" in str(caught.value)
    assert "busy" in str(caught.value)


async def test_cancelling_the_consumer_closes_the_stream(
    serve: StartServer, make_model: MakeModel
) -> None:
    # message_start, ping, content_block_start, first text delta; then the server stalls.
    server = await serve(scenario(reply("never finished " * 10, stall_after_events=4)))
    model = make_model(server.base_url)
    first_text = asyncio.Event()
    seen: list[ModelStreamEvent] = []

    async def consume() -> None:
        async for event in model.stream(simple_request()):
            seen.append(event)
            if isinstance(event, TextDelta):
                first_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_text.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await server.wait_for_disconnect(timeout_s=10) == [0]
    assert not any(isinstance(e, ResponseDone) for e in seen)


@pytest.mark.parametrize("config", ["config_dir_without_profile", "no_config_at_all"])
async def test_no_credentials_is_a_clear_model_error(
    serve: StartServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, config: str
) -> None:
    server = await serve(scenario(reply("unused")))
    for name in list(os.environ):
        if name.startswith("ANTHROPIC_"):
            monkeypatch.delenv(name)
    # Point the SDK's profile lookup at an empty place, never at a developer's own profile.
    # With ANTHROPIC_CONFIG_DIR set the SDK fails while building the client; with no config
    # anywhere it fails when sending the request. Both must read the same to the user.
    monkeypatch.setenv("HOME", str(tmp_path))
    if config == "config_dir_without_profile":
        monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "anthropic"))
    model = AnthropicModel(base_url=server.base_url, max_retries=0)
    try:
        with pytest.raises(ModelError, match="No credentials") as caught:
            await collect(model, simple_request())
    finally:
        await model.aclose()
    assert server.base_url in str(caught.value)
    assert server.requests == []
