"""The :class:`Model` protocol every model client implements, and its errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from lsp_agent.model.types import ModelRequest, ModelStreamEvent


class ModelError(Exception):
    """The model call failed after the client's own retries.

    ``status`` is the HTTP status when there was one (``None`` for connection errors and
    malformed responses); ``retryable`` says whether trying the same request later may work.
    ``kind`` is the API's error type (``overloaded_error``, ``rate_limit_error``, ...) or
    ``connection_error`` / ``timeout_error``; ``retry_after_s`` is the wait the endpoint asked
    for (``retry-after-ms`` / ``retry-after`` headers, seconds), ``None`` when it named none.
    ``mid_stream``: the transport failed after the answer's stream had opened (a stall, a
    broken connection, a stream cut short); the retry loop leaves those to the caller, as the
    SDK does, so that a stalled endpoint costs one read timeout, not one per retry.
    The message names the endpoint and the cause, ready to show to a user.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        kind: str | None = None,
        retry_after_s: float | None = None,
        mid_stream: bool = False,
    ):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.kind = kind
        self.retry_after_s = retry_after_s
        self.mid_stream = mid_stream


class Model(Protocol):
    """A streaming chat model.

    ``stream`` yields deltas as they arrive and always ends with exactly one
    :class:`~lsp_agent.model.types.ResponseDone`; it raises :class:`ModelError` when the call
    fails. Cancelling the consuming task closes the HTTP stream.
    """

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Send ``request`` and stream the answer."""
        ...

    async def aclose(self) -> None:
        """Release the HTTP client (idempotent)."""
        ...


@runtime_checkable
class TokenCounter(Protocol):
    """A model client that can count a request's prompt tokens exactly (the Messages API's
    ``count_tokens``)."""

    async def count_tokens(self, request: ModelRequest) -> int:
        """Input tokens of ``request``'s prompt; raises :class:`ModelError` on failure."""
        ...
