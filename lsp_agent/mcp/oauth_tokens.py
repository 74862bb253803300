"""Where the OAuth credentials of HTTP MCP servers live: the system keyring when it has a real
backend, else the 0600 file of :mod:`.oauth_store`.

The keyring is reached through the ``keyring`` package (macOS Keychain, the freedesktop Secret
Service, Windows Credential Locker, or a backend the user configured, e.g. with
``PYTHON_KEYRING_BACKEND``). Its backend counts as real unless it is ``keyring``'s
``fail.Keyring`` (no backend found), its ``null.Keyring``, or a chainer with nothing to chain;
then, or when ``LSP_AGENT_MCP_OAUTH_STORE=file`` forces it, the file is the store. One keyring
item per server: service :data:`KEYRING_SERVICE`, user name ``"<name> <url>"`` (as the file's
key), the entry's JSON as the password — the same plain data the file holds for it.

Nothing moves between the stores on its own. An entry is read from the keyring first, then
from the file (a token found in either is used); a change is written back where the entry
was found, a new entry goes to the preferred store (the file when the keyring refuses the
write, with a warning); a logout deletes it from both. A change of a keyring item is a
read-modify-write too, so it holds the lock of ``mcp-oauth-keyring`` in the state folder
(another process's change in between would be lost; the file has a lock of its own).
``keyring`` is imported on the first use here — only when an OAuth server logs in, refreshes
or connects — never on a cold path.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsp_agent.mcp import oauth_store
from lsp_agent.mcp.oauth_store import entry_key, oauth_path
from lsp_agent.store.file_lock import locked

log = logging.getLogger(__name__)

KEYRING_SERVICE = "lsp-agent MCP OAuth"
"""The keyring service name the credentials are stored under."""

KEYRING_LOCK = "mcp-oauth-keyring"
"""The name (``.lock`` added) of the lock held while a keyring item changes."""

STORE_ENV = "LSP_AGENT_MCP_OAUTH_STORE"
"""``file`` keeps the credentials in the file even when a keyring backend exists."""


def is_real_backend(backend: Any) -> bool:
    """Whether the ``keyring`` backend ``backend`` stores anything (see the module docstring)."""
    from keyring.backends import chainer, fail, null

    if isinstance(backend, fail.Keyring | null.Keyring):
        return False
    return not (isinstance(backend, chainer.ChainerBackend) and not backend.backends)


def keyring_backend(environ: Mapping[str, str] = os.environ) -> Any | None:
    """The keyring backend to use, or ``None`` for the file (forced by :data:`STORE_ENV`, or
    no real backend, or ``keyring`` failed to load one: logged). Never raises."""
    if environ.get(STORE_ENV, "").strip().lower() == "file":
        return None
    try:
        import keyring

        backend = keyring.get_keyring()
        return backend if is_real_backend(backend) else None
    except Exception as exc:
        log.warning("no keyring for MCP OAuth credentials (%s); using the file", exc)
        return None


def _keyring_entry(backend: Any, key: str) -> dict[str, Any] | None:
    try:
        raw = backend.get_password(KEYRING_SERVICE, key)
    except Exception as exc:
        log.warning("reading MCP OAuth credentials from the keyring failed (%s)", exc)
        return None
    if raw is None:
        return None
    try:
        entry = json.loads(raw)
    except ValueError:
        log.error("the keyring item of %s is malformed; ignored", key.split(" ", 1)[0])
        return None
    return entry if isinstance(entry, dict) else None


def load_entry(home: Path, name: str, url: str) -> dict[str, Any]:
    """The entry of ``name`` at ``url``: the keyring's, else the file's, else ``{}``. Never
    raises."""
    backend = keyring_backend()
    if backend is not None:
        entry = _keyring_entry(backend, entry_key(name, url))
        if entry is not None:
            return entry
    return oauth_store.load_entry(home, name, url)


def update_entry(home: Path, name: str, url: str, **fields: Any) -> None:
    """Set ``fields`` of the entry (``None`` removes one) in the store it is in, or for a new
    entry the preferred store (see the module docstring). Raises ``OSError`` if the file
    cannot be written."""
    backend = keyring_backend()
    if backend is None:
        oauth_store.update_entry(home, name, url, **fields)
        return
    with locked(oauth_path(home).with_name(KEYRING_LOCK)):
        _update_keyring(backend, home, name, url, fields)


def _update_keyring(backend: Any, home: Path, name: str, url: str, fields: dict[str, Any]) -> None:
    key = entry_key(name, url)
    current = _keyring_entry(backend, key)
    if current is None and oauth_store.load_entry(home, name, url):
        oauth_store.update_entry(home, name, url, **fields)
        return
    entry = dict(current or {})
    entry.update({"server": name, "url": url})
    for field, value in fields.items():
        if value is None:
            entry.pop(field, None)
        else:
            entry[field] = value
    try:
        if entry.keys() <= {"server", "url"}:
            if current is not None:
                backend.delete_password(KEYRING_SERVICE, key)
            return
        backend.set_password(KEYRING_SERVICE, key, json.dumps(entry, sort_keys=True))
    except Exception as exc:
        if current is not None:
            raise OSError(f"the keyring refused the MCP OAuth credentials: {exc}") from None
        log.warning("the keyring refused the MCP OAuth credentials (%s); using the file", exc)
        oauth_store.update_entry(home, name, url, **fields)


def forget_login(home: Path, name: str, url: str) -> None:
    """Delete the credentials of ``name`` at ``url`` from the keyring and the file (a logout).
    Raises ``OSError`` if either cannot be cleared."""
    backend = keyring_backend()
    key = entry_key(name, url)
    if backend is not None and _keyring_entry(backend, key) is not None:
        try:
            backend.delete_password(KEYRING_SERVICE, key)
        except Exception as exc:
            raise OSError(f"the keyring refused to delete the credentials: {exc}") from None
    oauth_store.forget_login(home, name, url)
