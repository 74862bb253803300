"""Proactive fix suggestions: persistence delay, rate limit, cancellation by user edits."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lsp_agent.diagnostics.config import SuggestConfig
from lsp_agent.diagnostics.model import Diagnostic, Position, Range
from lsp_agent.diagnostics.suggest import (
    FixRequest,
    Suggestion,
    SuggestionEngine,
    model_fix,
    parse_fix_reply,
)
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.testing.scenario import expecting, reply, scenario
from lsp_agent.testing.scripted import ScriptedServer

from .conftest import eventually

P = Path("/w/app.py")
TEXT = "a = 1\nb = 2\nc = undefined\nd = 4\ne = 5\nf = 6\ng = 7\n"


def error(line: int, message: str = "undefined name") -> Diagnostic:
    return Diagnostic(
        range=Range(start=Position(line=line, character=4), end=Position(line=line, character=13)),
        severity=1,
        message=message,
        source="checker",
        code="E1",
    )


class Fixer:
    """A compute function the test controls: it waits for ``release`` before answering."""

    def __init__(self) -> None:
        self.requests: list[FixRequest] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = 0

    async def __call__(self, request: FixRequest) -> str | None:
        self.requests.append(request)
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return request.region.replace("undefined", "3")


class Clock:
    """The engine's injected clock (monotonic seconds), moved only by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


async def settle() -> None:
    """Let everything that is due now run: timers set for "now", the tasks they start and the
    first steps of those tasks. Event-loop turns, no wall-clock time: with the engine's delays
    at 0 (or passed on the injected clock), whatever it would start has started afterwards."""
    for _ in range(20):
        await asyncio.sleep(0)


def engine(
    fixer: Fixer,
    ready: list[Suggestion],
    *,
    min_interval_ms: int = 0,
    delay_ms: int = 0,
    enabled: bool = True,
    clock: Clock | None = None,
) -> SuggestionEngine:
    settings = SuggestConfig(enabled=enabled, delay_ms=delay_ms, min_interval_ms=min_interval_ms)
    return SuggestionEngine(
        config=settings, compute=fixer, on_ready=ready.append, clock=clock or Clock()
    )


async def test_a_persisting_error_gets_one_suggestion() -> None:
    fixer, ready = Fixer(), list[Suggestion]()
    eng = engine(fixer, ready)
    eng.document_changed(P, 1, TEXT, None)
    eng.diagnostics_changed(P, 1, TEXT, [error(2)])
    await asyncio.wait_for(fixer.started.wait(), 5)
    (request,) = fixer.requests
    assert (request.first, request.last) == (0, 4)
    fixer.release.set()
    await eventually(lambda: bool(ready))
    ((suggestion, first, last),) = eng.suggestions(P)
    assert (first, last) == (0, 4)
    assert "c = 3" in suggestion.new and suggestion.title.startswith("AI fix")
    eng.diagnostics_changed(P, 1, TEXT, [error(2)])  # still there: no second job
    await settle()
    assert len(fixer.requests) == 1
    eng.close()


async def test_a_user_edit_in_the_region_cancels_the_job() -> None:
    fixer, ready = Fixer(), list[Suggestion]()
    eng = engine(fixer, ready)
    eng.document_changed(P, 1, TEXT, None)
    eng.diagnostics_changed(P, 1, TEXT, [error(2)])
    await asyncio.wait_for(fixer.started.wait(), 5)
    eng.document_changed(P, 2, TEXT.replace("c = undefined", "c = undefine"), [(2, 2)])
    await eventually(lambda: fixer.cancelled == 1)
    assert eng.cancelled_jobs == 1
    fixer.release.set()
    await settle()
    assert ready == [] and eng.suggestions(P) == []
    eng.close()


async def test_an_edit_elsewhere_keeps_the_job_and_the_suggestion_moves() -> None:
    text = "".join(f"v{i} = {'undefined' if i == 6 else i}\n" for i in range(12))
    fixer, ready = Fixer(), list[Suggestion]()
    eng = engine(fixer, ready)
    eng.document_changed(P, 1, text, None)
    eng.diagnostics_changed(P, 1, text, [error(6)])
    await asyncio.wait_for(fixer.started.wait(), 5)
    assert (fixer.requests[0].first, fixer.requests[0].last) == (4, 8)
    moved = "# header\n" + text
    eng.document_changed(P, 2, moved, [(0, 0)])  # above the region: the job goes on
    fixer.release.set()
    await eventually(lambda: bool(ready))
    ((_s, first, last),) = eng.suggestions(P)
    assert (first, last) == (5, 9)
    eng.document_changed(P, 3, moved.replace("v5 = 5", "v5 = 55"), [(6, 6)])
    assert eng.suggestions(P) == []  # its text changed: the suggestion is dropped
    eng.close()


async def test_starts_are_rate_limited_across_documents() -> None:
    fixer, ready, clock = Fixer(), list[Suggestion](), Clock()
    eng = engine(fixer, ready, min_interval_ms=60_000, clock=clock)
    other = Path("/w/other.py")
    for path in (P, other):
        eng.document_changed(path, 1, TEXT, None)
        eng.diagnostics_changed(path, 1, TEXT, [error(2)])
    await asyncio.wait_for(fixer.started.wait(), 5)
    fixer.release.set()
    await eventually(lambda: bool(ready))
    clock.advance(59.9)
    eng.diagnostics_changed(other, 1, TEXT, [error(2)])
    await settle()
    assert [r.path for r in fixer.requests] == [P]  # the second document waits for the interval
    clock.advance(0.1)
    eng.diagnostics_changed(other, 1, TEXT, [error(2)])
    await settle()
    assert [r.path for r in fixer.requests] == [P, other]  # ...and no longer
    eng.close()


async def test_an_error_must_persist_for_the_delay_on_the_injected_clock() -> None:
    fixer, ready, clock = Fixer(), list[Suggestion](), Clock()
    eng = engine(fixer, ready, delay_ms=4000, clock=clock)
    eng.document_changed(P, 1, TEXT, None)
    eng.diagnostics_changed(P, 1, TEXT, [error(2)])
    clock.advance(3.9)
    eng.diagnostics_changed(P, 1, TEXT, [error(2)])  # the same error, seen again
    await settle()
    assert fixer.requests == []
    clock.advance(0.1)
    eng.diagnostics_changed(P, 1, TEXT, [error(2)])
    await settle()
    assert len(fixer.requests) == 1  # 4 s since it was first seen
    eng.close()


async def test_a_vanished_error_cancels_its_job() -> None:
    fixer, ready = Fixer(), list[Suggestion]()
    eng = engine(fixer, ready)
    eng.document_changed(P, 1, TEXT, None)
    eng.diagnostics_changed(P, 1, TEXT, [error(2)])
    await asyncio.wait_for(fixer.started.wait(), 5)
    eng.diagnostics_changed(P, 1, TEXT, [])
    await eventually(lambda: fixer.cancelled == 1)
    eng.close()


@pytest.mark.parametrize("enabled", [False, True])
async def test_disabled_engine_never_computes(enabled: bool) -> None:
    # No delay and no rate limit: an enabled engine computes within `settle()` (the True case
    # proves it), so the False case fails if the engine ignores its switch.
    fixer, ready = Fixer(), list[Suggestion]()
    eng = engine(fixer, ready, enabled=enabled)
    eng.document_changed(P, 1, TEXT, None)
    eng.diagnostics_changed(P, 1, TEXT, [error(2)])
    await settle()
    assert len(fixer.requests) == (1 if enabled else 0)
    eng.close()


def test_suggestions_are_off_by_default() -> None:
    assert SuggestConfig().enabled is False


def test_parse_fix_reply_takes_the_first_fence() -> None:
    assert parse_fix_reply("Here:\n```python\nx = 1\ny = 2\n```\nthanks") == "x = 1\ny = 2"
    assert parse_fix_reply("no code") is None


async def test_model_fix_asks_the_model_for_the_region() -> None:
    script = scenario(
        reply(
            "```python\na = 1\nb = 2\nc = 3\nd = 4\ne = 5\n```",
            expect=expecting(last_user_contains="corrected text of lines 1-5"),
        )
    )
    async with ScriptedServer(scenario=script) as server:
        model = AnthropicModel(api_key="k", base_url=server.base_url, max_retries=0)
        compute = model_fix(model=model, model_name="claude-test")
        request = FixRequest(path=P, version=1, text=TEXT, diagnostic=error(2), first=0, last=4)
        assert await compute(request) == "a = 1\nb = 2\nc = 3\nd = 4\ne = 5"
        await model.aclose()
        server.assert_done()
