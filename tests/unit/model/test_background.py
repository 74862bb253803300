"""Background model requests over real HTTP: the marker header, routing to a separate script,
cancellation, failures ignored, and the switch."""

from __future__ import annotations

import asyncio
import logging

import pytest

from lsp_agent.model.background import (
    BACKGROUND_ENV,
    BACKGROUND_HEADER,
    BackgroundRequests,
    BackgroundResult,
    background_enabled,
)
from lsp_agent.testing.scenario import error, expecting, reply, scenario

from .conftest import MakeModel, StartServer, collect, simple_request


async def test_marked_request_takes_its_own_script(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(
        scenario(
            reply("main answer"),
            background={"title": [reply("Fix the parser", expect=expecting(stream=True))]},
        )
    )
    model = make_model(server.base_url)
    requests = BackgroundRequests(model=model)
    done: list[BackgroundResult] = []
    task = requests.start("title", simple_request("name it"), on_done=done.append)
    assert task is not None
    main = await collect(model, simple_request("the user's turn"))
    result = await task
    assert result is not None and result.text == "Fix the parser"
    assert done == [result]
    assert requests.usage.output_tokens == result.usage.output_tokens > 0
    assert main[-1].response.content[0].text == "main answer"  # type: ignore[union-attr]
    marked = [e for e in server.exchanges if e.background == "title"]
    assert len(marked) == 1 and marked[0].headers[BACKGROUND_HEADER] == "title"
    plain = [e for e in server.exchanges if e.background is None]
    assert len(plain) == 1 and BACKGROUND_HEADER not in plain[0].headers
    server.assert_done()
    assert server.background_unconsumed("title") == 0


async def test_unscripted_background_request_is_a_failure_and_returns_none(
    serve: StartServer, make_model: MakeModel, caplog: pytest.LogCaptureFixture
) -> None:
    server = await serve(scenario(reply("unused")))
    requests = BackgroundRequests(model=make_model(server.base_url))
    task = requests.start("summary", simple_request())
    assert task is not None
    with caplog.at_level(logging.INFO):
        assert await task is None
    assert "background summary request failed" in caplog.text
    assert any("background 'summary' request arrived" in f for f in server.failures)
    assert server.unconsumed() == [0]  # the main script was not touched


async def test_error_answer_is_logged_and_ignored(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(scenario(background={"title": [error(500, "boom")]}))
    called: list[BackgroundResult] = []
    requests = BackgroundRequests(model=make_model(server.base_url))
    task = requests.start("title", simple_request(), on_done=called.append)
    assert task is not None and await task is None
    assert called == []


async def test_cancel_stops_a_running_request(serve: StartServer, make_model: MakeModel) -> None:
    slow = reply("too late", delay_ms=10_000)
    server = await serve(scenario(background={"summary": [slow]}))
    requests = BackgroundRequests(model=make_model(server.base_url))
    task = requests.start("summary", simple_request())
    assert task is not None and requests.running("summary")
    for _ in range(100):
        if server.exchanges:
            break
        await asyncio.sleep(0.02)
    requests.cancel_all()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not requests.running("summary")


async def test_starting_a_kind_again_cancels_the_previous(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(
        scenario(background={"title": [reply("first", delay_ms=10_000), reply("second")]})
    )
    requests = BackgroundRequests(model=make_model(server.base_url))
    first = requests.start("title", simple_request())
    for _ in range(100):
        if server.exchanges:
            break
        await asyncio.sleep(0.02)
    second = requests.start("title", simple_request())
    assert first is not None and second is not None
    result = await second
    assert result is not None and result.text == "second"
    assert first.cancelled()


def test_off_sends_nothing() -> None:
    requests = BackgroundRequests(model=None, enabled=False)  # type: ignore[arg-type]
    assert requests.start("title", simple_request()) is None


@pytest.mark.parametrize(
    ("env", "setting", "expected"),
    [
        ({}, None, True),
        ({}, False, False),
        ({BACKGROUND_ENV: "0"}, True, False),
        ({BACKGROUND_ENV: "off"}, None, False),
        ({BACKGROUND_ENV: "1"}, False, True),
        ({BACKGROUND_ENV: "maybe"}, False, False),
        ({BACKGROUND_ENV: "maybe"}, None, True),
    ],
)
def test_switch(env: dict[str, str], setting: bool | None, expected: bool) -> None:
    assert background_enabled(env, setting) is expected


async def test_aclose_waits_for_the_cancelled_requests(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(scenario(background={"title": [reply("late", delay_ms=10_000)]}))
    requests = BackgroundRequests(model=make_model(server.base_url))
    task = requests.start("title", simple_request())
    assert task is not None
    await requests.aclose()
    assert task.cancelled() and requests.tasks == {}
