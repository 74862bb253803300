"""Our retry loop (``lsp_agent.model.retry``): the SDK's policy, run by us so that every retry
is announced with a ``RetryWait`` before its wait."""

from __future__ import annotations

import email.utils
import time

import pytest

from lsp_agent.model.base import ModelError
from lsp_agent.model.retry import backoff_s, retry_after_from, status_is_retryable
from lsp_agent.model.types import ResponseDone, RetryWait, TextDelta
from lsp_agent.testing.scenario import SseError, error, reply, scenario

from .conftest import MakeModel, StartServer, collect, simple_request


def test_backoff_doubles_from_half_a_second_up_to_eight() -> None:
    no_jitter = [backoff_s(n, retry_after_s=None, jitter=0.0) for n in range(6)]
    assert no_jitter == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    # Jitter takes off at most a quarter.
    assert backoff_s(2, retry_after_s=None, jitter=0.999) == pytest.approx(1.5005)


def test_retry_after_wins_over_backoff_when_positive() -> None:
    assert backoff_s(0, retry_after_s=3.0, jitter=0.5) == 3.0
    assert backoff_s(3, retry_after_s=0.0, jitter=0.0) == 4.0  # zero: the backoff


def test_retry_after_headers() -> None:
    assert retry_after_from({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_from({"retry-after": "2"}) == 2.0
    assert retry_after_from({}) is None
    assert retry_after_from({"retry-after": "soon"}) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    waited = retry_after_from({"retry-after": later})
    assert waited is not None and 25 < waited <= 31


def test_which_statuses_are_retried() -> None:
    assert [s for s in (400, 401, 404, 408, 409, 413, 429, 500, 503, 529)
            if status_is_retryable(s, {})] == [408, 409, 429, 500, 503, 529]  # fmt: skip
    assert not status_is_retryable(529, {"x-should-retry": "false"})
    assert status_is_retryable(400, {"x-should-retry": "true"})


async def test_each_retry_is_announced_before_its_wait(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(
        scenario(
            error(529, "Overloaded", retry_after_s=0.05),
            error(429, "Slow down", retry_after_s=0.02),
            reply("finally"),
        )
    )
    events = await collect(make_model(server.base_url, max_retries=4), simple_request())
    waits = [e for e in events if isinstance(e, RetryWait)]
    assert [(w.attempt, w.max_retries, w.delay_ms, w.status, w.error) for w in waits] == [
        (1, 4, 50, 529, "overloaded_error"),
        (2, 4, 20, 429, "rate_limit_error"),
    ]
    assert "Overloaded" in waits[0].message
    assert isinstance(events[-1], ResponseDone)
    assert events[-1].response.message().text() == "finally"
    # The SDK's own header still counts the tries.
    assert [e.headers.get("x-stainless-retry-count") for e in server.exchanges] == ["0", "1", "2"]
    server.assert_done()


async def test_the_last_failure_is_raised_after_max_retries(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(scenario(*[error(503, "down", retry_after_s=0) for _ in range(3)]))
    events: list[RetryWait] = []
    with pytest.raises(ModelError) as caught:
        async for event in make_model(server.base_url, max_retries=2).stream(simple_request()):
            assert isinstance(event, RetryWait)
            events.append(event)
    assert [e.attempt for e in events] == [1, 2]
    assert caught.value.status == 503
    assert "(after 2 retries)" in str(caught.value)
    server.assert_done()


async def test_an_error_the_endpoint_says_not_to_retry_is_raised_at_once(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(scenario(error(400, "bad request"), reply("never")))
    with pytest.raises(ModelError):
        await collect(make_model(server.base_url, max_retries=3), simple_request())
    assert len(server.requests) == 1


async def test_overload_in_the_stream_before_any_block_is_retried(
    serve: StartServer, make_model: MakeModel
) -> None:
    # message_start, then `event: error`: nothing of the answer was shown yet.
    server = await serve(
        scenario(reply("lost", sse_error=SseError(after_events=1)), reply("second try"))
    )
    events = await collect(make_model(server.base_url, max_retries=1), simple_request())
    waits = [e for e in events if isinstance(e, RetryWait)]
    assert [(w.attempt, w.status, w.error) for w in waits] == [(1, 529, "overloaded_error")]
    assert isinstance(events[-1], ResponseDone)
    assert events[-1].response.message().text() == "second try"


async def test_a_failure_after_the_answer_started_is_not_retried(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(
        scenario(reply("partial answer", sse_error=SseError(after_events=4)), reply("unused"))
    )
    seen: list[object] = []
    with pytest.raises(ModelError, match="overloaded_error"):
        async for event in make_model(server.base_url, max_retries=3).stream(simple_request()):
            seen.append(event)
    assert any(isinstance(e, TextDelta) for e in seen)
    assert not any(isinstance(e, RetryWait) for e in seen)
    assert len(server.requests) == 1


async def test_a_stall_after_the_stream_opened_is_not_retried(
    serve: StartServer, make_model: MakeModel
) -> None:
    # message_start, then nothing: one read timeout, not one per retry.
    server = await serve(scenario(reply("never", stall_after_events=1), reply("unused")))
    with pytest.raises(ModelError, match="stopped sending mid-response") as caught:
        await collect(make_model(server.base_url, max_retries=3, timeout_s=0.3), simple_request())
    assert caught.value.mid_stream
    assert len(server.requests) == 1
