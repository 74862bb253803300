"""One-line descriptions of what went wrong with an MCP server, for its status and the log.

Imports the SDK: only reached once a server is configured.
"""

from __future__ import annotations

import anyio
import httpx2
from mcp.shared.exceptions import MCPError


def describe_error(exc: BaseException) -> str:
    """``exc`` as one message: the first non-cancellation error of a group, an MCP error's
    code and message, an ``OSError``/``TimeoutError`` as its text, others with their type; an
    HTTP transport error names the URL it could not reach."""
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        if inner:
            return describe_error(inner[0])
    if isinstance(exc, MCPError):
        return f"MCP error {exc.code}: {exc.error.message}"
    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx2.TransportError) and (url := _request_url(exc)) not in text:
        text += f" ({url})"
    return text if isinstance(exc, (OSError, TimeoutError)) else f"{type(exc).__name__}: {text}"


def _request_url(exc: httpx2.TransportError) -> str:
    """The URL ``exc`` failed to reach, without user info or query (they may hold secrets);
    empty when the error carries no request."""
    try:
        url = exc.request.url
    except RuntimeError:  # raised by httpx when no request is attached
        return ""
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{url.host}{port}{url.path}"
