"""Our retry loop around a streaming model request, so that every retry can be shown.

The SDK retries failed requests itself and tells nobody: against an overloaded or unreachable
endpoint the user waited up to a minute with no sign of progress. The Anthropic client turns the
SDK's retries off for the streaming call and runs :func:`stream_with_retries` instead, with the
SDK's own policy (anthropic-python, ``_base_client``: ``_should_retry``,
``_parse_retry_after_header``, ``_calculate_retry_timeout``):

- retried: connection errors and timeouts, HTTP 408, 409, 429 and every 5xx (529 overloaded
  included), unless the endpoint's ``x-should-retry`` header says otherwise;
- the wait is what the endpoint asked for (``retry-after-ms``, else ``retry-after`` in seconds
  or as an HTTP date) when positive, else 0.5 s doubled per retry up to 8 s, less up to 25 %
  jitter;
- at most ``max_retries`` retries (``LSP_AGENT_MAX_RETRIES``; default 4).

Before each wait the loop yields a :class:`~lsp_agent.model.types.RetryWait`, which the agent
loop turns into a session update. Only a request whose answer has not started is retried: an
error after the first delta is raised, since part of the answer has been shown, and so is a
transport failure once the stream is open (a stall, a cut; ``ModelError.mid_stream``), as
with the SDK. Errors the API sends in the stream before any block (``event: error`` with
``overloaded_error``) are retried, which the SDK never does.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping

from lsp_agent.model.base import ModelError
from lsp_agent.model.types import ModelStreamEvent, RetryWait

INITIAL_RETRY_DELAY_S = 0.5
"""First backoff wait (seconds; the SDK's ``INITIAL_RETRY_DELAY``)."""

MAX_RETRY_DELAY_S = 8.0
"""Longest backoff wait (seconds; the SDK's ``MAX_RETRY_DELAY``)."""

MAX_RETRY_AFTER_S = 4_294_967.0
"""Longest wait a ``retry-after`` header may ask for (seconds; the SDK's bound)."""

MAX_RETRIES_ENV = "LSP_AGENT_MAX_RETRIES"
"""Environment variable: retries of a failed model request (default
:data:`DEFAULT_MAX_RETRIES`); 0 makes an unreachable endpoint fail at once."""

DEFAULT_MAX_RETRIES = 4


def max_retries_from(environ: Mapping[str, str]) -> int:
    """The model client's retry count from ``LSP_AGENT_MAX_RETRIES`` (default 4).

    Raises ``ValueError`` naming the variable when it is not a non-negative integer.
    """
    raw = environ.get(MAX_RETRIES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_RETRIES
    if not raw.isdigit():
        raise ValueError(f"{MAX_RETRIES_ENV} must be a non-negative integer, got {raw!r}")
    return int(raw)


RETRYABLE_STATUSES = frozenset({408, 409, 429})
"""Statuses below 500 that are retried (request timeout, lock timeout, rate limit)."""


def retry_after_from(headers: Mapping[str, str]) -> float | None:
    """The wait an error response asks for, in seconds: ``retry-after-ms`` (milliseconds),
    else ``retry-after`` as seconds or as an HTTP date; ``None`` when absent or unreadable.
    Header names are matched as given (pass an httpx ``Headers``, which ignores case)."""
    try:
        return float(headers.get("retry-after-ms", "")) / 1000
    except ValueError:
        pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(raw)
    if parsed is None:
        return None
    return float(email.utils.mktime_tz(parsed) - time.time())


def status_is_retryable(status: int, headers: Mapping[str, str]) -> bool:
    """Whether an HTTP error answer is worth retrying: the endpoint's ``x-should-retry``
    (``true``/``false``) wins, else 408, 409, 429 and any 5xx."""
    verdict = headers.get("x-should-retry")
    if verdict in ("true", "false"):
        return verdict == "true"
    return status in RETRYABLE_STATUSES or status >= 500


def backoff_s(retries_done: int, *, retry_after_s: float | None, jitter: float) -> float:
    """Seconds to wait before the next retry, after ``retries_done`` retries (0 before the
    first). A positive ``retry_after_s`` is used as it is (bounded by
    :data:`MAX_RETRY_AFTER_S`); otherwise ``0.5 s * 2**retries_done`` up to 8 s, times
    ``1 - 0.25 * jitter`` (``jitter`` in [0, 1))."""
    if retry_after_s is not None and retry_after_s > 0:
        return min(retry_after_s, MAX_RETRY_AFTER_S)
    base = min(INITIAL_RETRY_DELAY_S * 2.0 ** min(retries_done, 1000), MAX_RETRY_DELAY_S)
    return max(base * (1 - 0.25 * jitter), 0.0)


Attempt = Callable[[int], AsyncGenerator[ModelStreamEvent, None]]
"""One try of the request; its argument is the number of retries made before it."""


async def stream_with_retries(
    attempt: Attempt,
    *,
    max_retries: int,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    jitter: Callable[[], float] = random.random,
) -> AsyncIterator[ModelStreamEvent]:
    """The events of ``attempt(0)``; when it raises a retryable :class:`ModelError` before
    its first event, a :class:`RetryWait`, the wait, and the events of ``attempt(1)``, and so
    on up to ``attempt(max_retries)``. Raises the last :class:`ModelError` when it is not
    retryable, came after the answer started or mid-stream, or no retry is left. Each
    attempt's generator is closed before the next starts; cancellation during a wait ends the
    loop at once."""
    retries = 0
    while True:
        started = False
        try:
            async with contextlib.aclosing(attempt(retries)) as events:
                async for event in events:
                    started = True
                    yield event
            return
        except ModelError as exc:
            if started or not exc.retryable or exc.mid_stream or retries >= max_retries:
                raise
            failure = exc
        delay = backoff_s(retries, retry_after_s=failure.retry_after_s, jitter=jitter())
        retries += 1
        yield RetryWait(
            attempt=retries,
            max_retries=max_retries,
            delay_ms=round(delay * 1000),
            status=failure.status,
            error=failure.kind or "api_error",
            message=str(failure),
        )
        await sleep(delay)
