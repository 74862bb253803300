"""The SDK's errors as :class:`~lsp_agent.model.base.ModelError`: what failed, at which
endpoint, with the HTTP status, the API's error type and message, and whether a retry can help
(408/409/429/5xx/529, honouring ``retry-after``; :mod:`lsp_agent.model.retry`).

Nothing here imports the SDK at module import time (its types are for annotations only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lsp_agent.model.anthropic_request import REQUEST_LIMIT_BYTES
from lsp_agent.model.base import ModelError
from lsp_agent.model.retry import retry_after_from, status_is_retryable

if TYPE_CHECKING:
    from anthropic import APIStatusError

__all__ = ["describe_cause", "mid_stream_error", "status_error"]

# Error types the API sends mid-stream, with the HTTP status they stand for.
_STREAM_ERROR_STATUS = {
    "overloaded_error": 529,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
}


def _of_bytes(size: int | None) -> str:
    return f" of {size:,} bytes" if size is not None else ""


def describe_cause(exc: BaseException) -> str:
    """The SDK's connection errors wrap the useful part (``ConnectionRefusedError``, DNS
    failure...) a few levels down: name the outermost transport error and the root cause."""
    chain: list[BaseException] = []
    current: BaseException | None = exc.__cause__ or exc
    while current is not None and current not in chain and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    outer, root = chain[0], chain[-1]
    if root is outer:
        return str(outer) or type(outer).__name__
    return f"{outer} ({type(root).__name__}: {root})"


def status_error(
    exc: APIStatusError,
    *,
    endpoint: str,
    max_retries: int,
    size: int | None = None,
    retries: int | None = None,
) -> ModelError:
    """``exc`` as a :class:`ModelError` naming ``endpoint`` (``size``: the request's bytes,
    named when it was refused as too large; ``retries``: retries made before it, ``None``: the
    SDK's own count, ``max_retries``)."""
    status = exc.status_code
    headers = exc.response.headers
    error_type = str(exc.type or "error")
    detail = exc.api_message or (str(exc.body) if exc.body is not None else exc.message)
    request_id = f" [request-id {exc.request_id}]" if exc.request_id else ""
    if status < 400:
        # An `event: error` inside a 200 stream: the error type says what happened.
        mapped = _STREAM_ERROR_STATUS.get(error_type)
        return ModelError(
            f"The model endpoint {endpoint} sent an error mid-stream "
            f"({error_type}): {detail}{request_id}",
            status=mapped,
            retryable=mapped is not None,
            kind=error_type,
        )
    if status == 413:
        return ModelError(
            f"The model endpoint {endpoint} refused the request{_of_bytes(size)} as "
            f"too large (HTTP 413, "
            f"{error_type}; the Messages API accepts at most {REQUEST_LIMIT_BYTES} bytes): "
            f"{detail}{request_id}",
            status=status,
            kind=error_type,
        )
    retryable = status_is_retryable(status, headers)
    done = max_retries if retries is None else retries
    retried = f" (after {done} retries)" if retryable else ""
    return ModelError(
        f"The model endpoint {endpoint} answered HTTP {status} ({error_type}): "
        f"{detail}{request_id}{retried}",
        status=status,
        retryable=retryable,
        kind=error_type,
        retry_after_s=retry_after_from(headers),
    )


def mid_stream_error(
    exc: Exception, *, endpoint: str, timeout_name: Callable[[BaseException], str]
) -> ModelError:
    """What failed while an answer's stream was being read (``exc``: an ``httpx2`` transport
    error, or the ``ValueError`` of an event that is not UTF-8 or not JSON), as a mid-stream
    :class:`ModelError` naming ``endpoint``; ``timeout_name(exc)`` names an expired timeout.
    A malformed event is not retried (the same endpoint is likely to send it again)."""
    import httpx2

    if isinstance(exc, httpx2.TimeoutException):
        return ModelError(
            f"The model endpoint {endpoint} stopped sending mid-response: nothing "
            f"arrived within the {timeout_name(exc)}",
            retryable=True,
            kind="timeout_error",
            mid_stream=True,
        )
    if isinstance(exc, httpx2.HTTPError):
        return ModelError(
            f"The connection to the model endpoint {endpoint} broke mid-response: "
            f"{str(exc) or type(exc).__name__}",
            retryable=True,
            kind="connection_error",
            mid_stream=True,
        )
    what = "is not UTF-8" if isinstance(exc, UnicodeDecodeError) else "is not JSON"
    return ModelError(
        f"The model endpoint {endpoint} sent a malformed event mid-response: its data {what} "
        f"({exc})",
        kind="api_error",
        mid_stream=True,
    )
