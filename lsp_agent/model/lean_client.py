"""The HTTP client the SDK is given: on the lean transport
(:mod:`lsp_agent.model.lean_http`) when it applies, else the SDK's default client.

Nothing here imports the SDK at module import time.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

    import httpx2

__all__ = ["LEAN_HTTP_ENV", "http_client"]

LEAN_HTTP_ENV = "LSP_AGENT_LEAN_HTTP"
"""``0``: keep the SDK's default HTTP transport even where the lean one applies (to compare
the two, or to rule the lean one out when a connection problem is reported)."""


def http_client(
    endpoint: str, *, timeout: httpx2.Timeout, context: ssl.SSLContext | None
) -> httpx2.AsyncClient | None:
    """The ``http_client`` for an ``AsyncAnthropic`` reaching ``endpoint`` (its base URL) with
    ``timeout``: the SDK's default client on :class:`~lsp_agent.model.lean_http.LeanTransport`
    when it applies (see :func:`~lsp_agent.model.lean_http.lean_transport_applies`) and
    :data:`LEAN_HTTP_ENV` is not ``0``; else the SDK's default client with ``context`` as its
    TLS context, or ``None`` (the SDK builds its own) when ``context`` is ``None``. The TLS
    context is the one the default client would build: ``context`` when given, else the HTTP
    library's default (same CA source, hostname check; reads ``SSL_CERT_FILE`` and
    ``SSL_CERT_DIR``). Raises ``OSError``/``ssl.SSLError`` when that CA source cannot be
    loaded, as the default client does."""
    import anthropic
    import httpx2

    from lsp_agent.model.lean_http import LeanTransport, lean_transport_applies

    if os.environ.get(LEAN_HTTP_ENV, "").strip() == "0" or not lean_transport_applies(endpoint):
        if context is None:
            return None
        return anthropic.DefaultAsyncHttpxClient(timeout=timeout, verify=context)
    tls = context if context is not None else httpx2.create_ssl_context()
    return anthropic.DefaultAsyncHttpxClient(
        timeout=timeout, transport=LeanTransport(ssl_context=tls)
    )
