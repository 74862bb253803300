"""Logging out of an OAuth MCP server: the tokens are revoked at the authorisation server when
it offers revocation (RFC 7009), then forgotten locally whatever the server said.

The revocation endpoint is the ``revocation_endpoint`` of the authorisation server metadata
stored at login (RFC 8414 §2). The refresh token goes first (RFC 7009 §2.1: revoking it may
revoke its access tokens too), then the access token, each with its ``token_type_hint``; the
client authenticates as it does at the token endpoint (its ``client_id`` in the form; a
confidential client's secret by HTTP Basic or in the form, as it was registered). It is best
effort: bounded by :data:`REVOKE_TIMEOUT_S`, a failure is logged (never with a token) and the
local credentials are deleted all the same, so a server that is down cannot keep a user logged
in. Imports ``httpx2``: reached only when an HTTP server is configured.
"""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx2

from lsp_agent.mcp.config import ServerSpec
from lsp_agent.mcp.oauth_tokens import forget_login, load_entry

log = logging.getLogger(__name__)

REVOKE_TIMEOUT_S = 5.0
"""How long a logout waits for the authorisation server to revoke the tokens (seconds, both
requests together); then the local credentials are deleted anyway."""


async def logout(*, spec: ServerSpec, home: Path, timeout_s: float = REVOKE_TIMEOUT_S) -> bool:
    """Revoke the stored tokens of ``spec`` (see the module docstring), then forget its
    credentials. Returns whether the server accepted every revocation it was sent (``False``:
    it offers none, there was no token, or it failed or timed out). Raises ``OSError`` if the
    local credentials cannot be removed."""
    # The keyring's calls may block: they run in a worker thread.
    entry = await anyio.to_thread.run_sync(load_entry, home, spec.name, spec.url)
    try:
        return await revoke(spec=spec, entry=entry, timeout_s=timeout_s)
    finally:
        await anyio.to_thread.run_sync(forget_login, home, spec.name, spec.url)


def _client(spec: ServerSpec, entry: dict[str, Any]) -> tuple[str, str | None, str]:
    """``(client_id, secret, method)`` of the client the tokens were issued to ("" when none
    is known)."""
    if spec.client_id is not None:
        method = "client_secret_basic" if spec.client_secret else "none"
        return spec.client_id, spec.client_secret, method
    info = entry.get("client_info")
    info = info if isinstance(info, dict) else {}
    client_id, secret = info.get("client_id"), info.get("client_secret")
    stored = info.get("token_endpoint_auth_method")
    return (
        client_id if isinstance(client_id, str) else "",
        secret if isinstance(secret, str) and secret else None,
        stored if isinstance(stored, str) else "client_secret_basic",
    )


async def revoke(*, spec: ServerSpec, entry: dict[str, Any], timeout_s: float) -> bool:
    """Send the revocation requests for the tokens of ``entry`` (a stored credentials entry,
    plain data). Returns whether each was answered 200. Never raises but cancellation."""
    tokens, metadata = entry.get("tokens"), entry.get("metadata")
    endpoint = metadata.get("revocation_endpoint") if isinstance(metadata, dict) else None
    if not isinstance(tokens, dict) or not isinstance(endpoint, str) or not endpoint:
        return False
    client_id, secret, method = _client(spec, entry)
    headers: dict[str, str] = {}
    if secret is not None and method == "client_secret_basic":
        # RFC 6749 §2.3.1: both parts form-url-encoded before Base64.
        pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    sent = accepted = 0
    with anyio.move_on_after(timeout_s) as scope:
        async with httpx2.AsyncClient(timeout=timeout_s, follow_redirects=False) as client:
            for hint in ("refresh_token", "access_token"):
                token = tokens.get(hint)
                if not isinstance(token, str) or not token:
                    continue
                form = {"token": token, "token_type_hint": hint}
                if client_id:
                    form["client_id"] = client_id
                if secret is not None and method == "client_secret_post":
                    form["client_secret"] = secret
                sent += 1
                try:
                    response = await client.post(endpoint, data=form, headers=headers)
                except httpx2.HTTPError as exc:
                    log.warning(
                        "MCP server %s: revoking its %s failed (%s)",
                        spec.name,
                        hint.replace("_", " "),
                        type(exc).__name__,
                    )
                    continue
                if response.status_code == 200:
                    accepted += 1
                else:
                    log.warning(
                        "MCP server %s: the authorisation server refused to revoke its %s "
                        "(HTTP %d)",
                        spec.name,
                        hint.replace("_", " "),
                        response.status_code,
                    )
    if scope.cancelled_caught:
        log.warning("MCP server %s: no revocation answer within %g s", spec.name, timeout_s)
    if sent and accepted < sent:
        log.warning("MCP server %s: not every token was revoked; forgotten here anyway", spec.name)
    else:
        log.info("MCP server %s: %d token(s) revoked at the server", spec.name, accepted)
    return sent > 0 and accepted == sent
