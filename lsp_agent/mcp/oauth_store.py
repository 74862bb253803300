"""OAuth credentials of HTTP MCP servers, kept per server in one 0600 file of the user's state
folder (platformdirs: on Linux ``~/.local/state/lsp-agent/mcp-oauth.json``)::

    {"version": 1, "servers": {"<name> <url>": {"server": "<name>", "url": "<url>",
        "tokens": {...OAuthToken...}, "expires_at": 1767225600.0,
        "client_info": {...OAuthClientInformationFull...}}}}

An entry is keyed by the server's name *and* URL, so a definition that points the same name at
another server never receives the first one's tokens. ``expires_at`` is the access token's
expiry (seconds since the epoch) computed when it was stored, so an expired token is refreshed
after a restart too. The file is written atomically (mode 0600, folder 0700), each update
under a lock (:mod:`lsp_agent.store.file_lock`) so concurrent writers keep each other's
entries; a broken file
reads as "no credentials" (the user logs in again) and is logged without its contents. Plain
data only: the SDK's models are built from these dicts in :mod:`.oauth`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from lsp_agent.mcp.approvals import state_dir, write_private_text
from lsp_agent.store.file_lock import locked

log = logging.getLogger(__name__)

OAUTH_FILE = "mcp-oauth.json"
"""The credentials file's name in the user's state folder."""


def oauth_path(home: Path) -> Path:
    """The credentials file of the user whose home directory is ``home``."""
    return state_dir(home) / OAUTH_FILE


def entry_key(name: str, url: str) -> str:
    """The key of server ``name`` at ``url`` in the file."""
    return f"{name} {url}"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError) as exc:
        # The message names the file and the parse error only, never its contents.
        log.error("MCP OAuth file %s is unreadable (%s): every server must log in again", path, exc)
        return {}
    servers = data.get("servers") if isinstance(data, dict) else None
    return servers if isinstance(servers, dict) else {}


def load_entry(home: Path, name: str, url: str) -> dict[str, Any]:
    """The stored entry of server ``name`` at ``url`` (``{}`` when none). Never raises."""
    entry = _read(oauth_path(home)).get(entry_key(name, url))
    return entry if isinstance(entry, dict) else {}


def update_entry(home: Path, name: str, url: str, **fields: Any) -> None:
    """Set ``fields`` of the entry of ``name`` at ``url`` (a value ``None`` removes the field;
    an entry left with no credentials is removed). Raises ``OSError`` if the file cannot be
    written."""
    path = oauth_path(home)
    with locked(path):  # another process's update in between would be lost
        servers = _read(path)
        key = entry_key(name, url)
        entry = servers.get(key)
        entry = dict(entry) if isinstance(entry, dict) else {}
        entry.update({"server": name, "url": url})
        for field, value in fields.items():
            if value is None:
                entry.pop(field, None)
            else:
                entry[field] = value
        if entry.keys() <= {"server", "url"}:
            servers.pop(key, None)
        else:
            servers[key] = entry
        text = json.dumps({"version": 1, "servers": servers}, indent=2, sort_keys=True)
        write_private_text(path, text + "\n")


def forget_login(home: Path, name: str, url: str) -> None:
    """Remove the tokens, client registration and metadata of ``name`` at ``url`` (a logout:
    the next connection needs a login). Raises ``OSError`` if the file cannot be written."""
    update_entry(home, name, url, tokens=None, expires_at=None, client_info=None, metadata=None)
