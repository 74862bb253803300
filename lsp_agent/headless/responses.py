"""The model requests of one headless run: timing, the ``--verbose`` line of each, and the API
fields Claude Code's stream puts in every ``assistant`` message.

:class:`TimedModel` wraps the session's model. Each request is numbered; when it ends, a
``[model]`` line goes to stderr with ``--verbose`` (status, stop reason, tokens, ms), its time
span counts towards ``duration_api_ms`` (only requests that got an answer: a request that never
reached an endpoint took no API time; overlapping spans, such as a title written in the
background during the turn's request, count once, so the API time never exceeds the wall
time), and its :class:`~lsp_agent.model.types.AssistantResponse` is kept so
that :meth:`ResponseLog.message_fields` can give the assistant message its ``id``, ``model``,
``stop_reason`` and ``usage``.
"""

from __future__ import annotations

import gc
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from lsp_agent.model.types import AssistantResponse, ResponseDone

if TYPE_CHECKING:
    from lsp_agent.model.base import Model
    from lsp_agent.model.types import Message, ModelRequest, ModelStreamEvent


@dataclass(kw_only=True)
class ResponseLog:
    """Every response of the run, in order, and when requests were waiting on the API."""

    model: str
    responses: list[AssistantResponse] = field(default_factory=list)
    requests: int = 0
    _used: set[int] = field(default_factory=set)
    _spans: list[tuple[float, float]] = field(default_factory=list)

    def add_span(self, start: float, end: float) -> None:
        """Record that an answered request ran from ``start`` to ``end`` (``time.perf_counter``
        seconds)."""
        self._spans.append((start, end))

    def api_ms_between(self, start: float, end: float) -> float:
        """Milliseconds of ``[start, end]`` (``time.perf_counter`` seconds) during which at least
        one answered request was running: the union of the recorded spans, so concurrent
        requests count once and the result never exceeds ``end - start``."""
        total = 0.0
        reach = start
        for span_start, span_end in sorted(self._spans):
            lo, hi = max(span_start, reach), min(span_end, end)
            if hi > lo:
                total += hi - lo
                reach = hi
        return total * 1000

    def last_stop_reason(self) -> str | None:
        """The API stop reason of the last response (``None``: no response at all)."""
        return self.responses[-1].stop_reason if self.responses else None

    def message_fields(self, message: Message) -> dict[str, Any]:
        """An assistant message as the Messages API returned it: ``id``, ``type``, ``role``,
        ``model``, ``content``, ``stop_reason``, ``stop_sequence``, ``usage``. The response is
        the first unused one with the same content; a message no response produced (a
        compaction summary, a cancelled turn's stub) gets a fresh id and no usage."""
        content = [block.model_dump(mode="json") for block in message.content]
        response = self._match(message)
        if response is None:
            return {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": content,
                "stop_reason": None,
                "stop_sequence": None,
                "usage": None,
            }
        return {
            "id": response.id or f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": response.model or self.model,
            "content": content,
            "stop_reason": response.stop_reason,
            "stop_sequence": None,
            "usage": response.usage.model_dump(),
        }

    def _match(self, message: Message) -> AssistantResponse | None:
        uses = [u.id for u in message.tool_uses()]
        fallback: int | None = None
        for index, response in enumerate(self.responses):
            if index in self._used:
                continue
            if response.content == message.content:
                self._used.add(index)
                return response
            response_uses = [u.id for u in response.message().tool_uses()]
            if fallback is None and uses and response_uses == uses:
                fallback = index
        if fallback is not None:
            self._used.add(fallback)
            return self.responses[fallback]
        return None


def pause_collector() -> None:
    """Pause Python's cyclic garbage collector for a run's start-up (imports, settings, the
    session, the model client). Start-up makes hundreds of thousands of objects that live as
    long as the process, and the collector's passes over them (three full ones and about
    twenty-five of the middle generation, ~1 ms each, in a ``run -p`` traced with
    ``gc.callbacks``) are most of what start-up spends on memory management. The first
    answer the run's :class:`TimedModel` streams resumes it (:func:`resume_collector`)."""
    gc.disable()


def resume_collector() -> None:
    """Resume the collector paused by :func:`pause_collector`: what exists now moves to its
    permanent generation first (``gc.freeze``), so later passes, full ones included, look only
    at what the turns make. Does nothing when the collector runs."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


class TimedModel:
    """Wraps a model: records each response in ``log`` and, with ``verbose``, writes one
    ``[model]`` line per request to ``err``; ``before_first`` runs before the run's first
    request, :attr:`before_each` before every request."""

    def __init__(
        self,
        inner: Model,
        *,
        log: ResponseLog,
        err: TextIO,
        verbose: bool,
        before_first: Callable[[], None] = lambda: None,
    ) -> None:
        self.inner = inner
        self._log = log
        self._err = err
        self._verbose = verbose
        self._before_first = before_first
        """Called before the run's first model request (``log`` counts the requests)."""
        self._collecting = False
        """Whether a request has answered yet (and the collector was resumed)."""
        self.before_each: Callable[[], None] = lambda: None
        """Called before every request (the door shows what the history gained since: a
        batch's tool results are out before the model's next answer comes)."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """The inner model's stream, timed and recorded."""
        if self._log.requests == 0:
            self._before_first()
        self.before_each()
        self._log.requests += 1
        number = self._log.requests
        start = time.perf_counter()
        answered = False
        response: AssistantResponse | None = None
        failure: str | None = None
        try:
            async for event in self.inner.stream(request):
                if not answered:
                    answered = True
                    if not self._collecting:
                        resume_collector()  # start-up is over (see pause_collector)
                        self._collecting = True
                if isinstance(event, ResponseDone):
                    response = event.response
                yield event
        except BaseException as exc:
            failure = str(exc) or type(exc).__name__
            raise
        finally:
            end = time.perf_counter()
            elapsed = (end - start) * 1000
            if answered:
                self._log.add_span(start, end)
            if response is not None:
                self._log.responses.append(response)
            if self._verbose:
                self._err.write(_request_line(number, request, response, failure, elapsed))
                self._err.flush()

    async def aclose(self) -> None:
        """Close the inner model's connections, if it holds any."""
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()


def _request_line(
    number: int,
    request: ModelRequest,
    response: AssistantResponse | None,
    failure: str | None,
    elapsed_ms: float,
) -> str:
    """``[model] #2 claude-…: 200 tool_use · 1,234 in (0 cached) / 56 out tokens · 812 ms``;
    a request made off the user's turn says which (``[model] #1 claude-… (title, in the
    background): …``), so one prompt's lines do not read as several model turns."""
    kind = f" ({request.background}, in the background)" if request.background else ""
    head = f"[model] #{number} {request.model}{kind}:"
    if response is not None:
        usage = response.usage
        cached = usage.cache_read_input_tokens
        return (
            f"{head} 200 {response.stop_reason or 'no stop reason'} · "
            f"{usage.context_tokens:,} in ({cached:,} cached) / {usage.output_tokens:,} out "
            f"tokens · {elapsed_ms:,.0f} ms\n"
        )
    reason = failure or "the stream ended early"
    return f"{head} failed after {elapsed_ms:,.0f} ms: {reason}\n"
