"""Turning an MCP server of any scope off (and on again) for one project, persisted where
Claude Code keeps the same switch: the project's entry of the user's ``~/.claude.json``::

    {"projects": {"/abs/project": {"disabledMcpServers": ["github"],
                                   "disabledMcpjsonServers": ["from-mcp-json"]}}}

Claude Code's ``/mcp`` menu writes ``disabledMcpServers`` for servers of the user, local and
other non-project scopes and ``disabledMcpjsonServers`` for ``.mcp.json`` servers; a Claude
Code user's switches therefore work here unchanged, and ours there. The file is the user's
own, outside every repository, so a workspace can neither re-enable a server the user
turned off nor turn one on. Both lists are read for every scope (a repository's
``.mcp.json`` reusing the name of a server the user turned off stays off).

Writing keeps every other key of the file as it was (order included), replaces the file
atomically with its mode (our own writers take turns under a lock in the state folder; Claude
Code, which rewrites the file itself, does not take it), follows a symlinked
``~/.claude.json`` to its target, and refuses to touch a file that is not a JSON object
(nothing of the user's is lost).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsp_agent.mcp.approvals import state_dir
from lsp_agent.store.file_lock import locked

USER_STATE_FILE = ".claude.json"
"""Claude Code's per-user state file in the home directory."""

DISABLED_KEY = "disabledMcpServers"
"""Claude Code's per-project list of turned-off servers of the non-project scopes."""

DISABLED_MCPJSON_KEY = "disabledMcpjsonServers"
"""Claude Code's per-project list of turned-off (rejected) ``.mcp.json`` servers."""

MAX_STATE_BYTES = 256 * 1024 * 1024
"""A ``~/.claude.json`` larger than this is not rewritten (bytes)."""


class EnablementError(Exception):
    """The switch cannot be saved (the file is unreadable, not JSON, too large, or cannot be
    written); the message names the file and the problem."""


def disabled_names(state: Mapping[str, Any], project: Path) -> dict[str, str]:
    """The servers ``state`` (``~/.claude.json``'s value) turns off for ``project``
    (absolute), by name, each with the list naming it (the reason shown to the user)."""
    projects = state.get("projects")
    entry = projects.get(str(project)) if isinstance(projects, dict) else None
    out: dict[str, str] = {}
    if not isinstance(entry, dict):
        return out
    for key in (DISABLED_MCPJSON_KEY, DISABLED_KEY):
        value = entry.get(key)
        if isinstance(value, list):
            for name in value:
                if isinstance(name, str):
                    out[name] = f"turned off for this project ({key} in ~/{USER_STATE_FILE})"
    return out


def set_server_enabled(
    home: Path, project: Path, *, server: str, project_scope: bool, enabled: bool
) -> bool:
    """Turn ``server`` on or off for ``project`` (absolute) in ``home``'s ``~/.claude.json``.

    Off adds the name to ``disabledMcpjsonServers`` (``project_scope``: a ``.mcp.json``
    server) or ``disabledMcpServers``; on removes it from both. Returns whether the file
    changed. Raises :class:`EnablementError` naming the file and the problem when it cannot be
    read as a JSON object or written (the file is then left as it was).
    """
    path = home / USER_STATE_FILE
    with contextlib.suppress(OSError):
        path = path.resolve()  # a symlinked ~/.claude.json (dotfiles) keeps its link
    try:
        # Our own processes (editor servers, the CLI) take turns; the lock file lives in our
        # state folder, not beside the user's file.
        with locked(state_dir(home) / "claude-json"):
            return _update(
                path, project, server=server, project_scope=project_scope, enabled=enabled
            )
    except OSError as exc:
        raise EnablementError(f"{path} cannot be updated ({exc}); not changed") from None


def _update(path: Path, project: Path, *, server: str, project_scope: bool, enabled: bool) -> bool:
    state, mode = _read(path)
    projects = state.setdefault("projects", {})
    if not isinstance(projects, dict):
        raise EnablementError(f"{path}: 'projects' is not an object; not changed")
    entry = projects.setdefault(str(project), {})
    if not isinstance(entry, dict):
        raise EnablementError(f"{path}: the entry of {project} is not an object; not changed")
    changed = False
    if enabled:
        keys: tuple[str, ...] = (DISABLED_KEY, DISABLED_MCPJSON_KEY)
    else:
        keys = (DISABLED_MCPJSON_KEY if project_scope else DISABLED_KEY,)
    for key in keys:
        current = entry.get(key)
        names = [n for n in current if isinstance(n, str)] if isinstance(current, list) else []
        if enabled:
            wanted = [n for n in names if n != server]
        else:
            wanted = names if server in names else [*names, server]
        if wanted != current and (current is not None or wanted):
            entry[key] = wanted
            changed = True
    if changed:
        _write(path, json.dumps(state, indent=2, ensure_ascii=False) + "\n", mode=mode)
    return changed


def _read(path: Path) -> tuple[dict[str, Any], int]:
    """The file's object and mode (``{}`` and 0600 when it does not exist)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return {}, 0o600
    except OSError as exc:
        raise EnablementError(f"{path} cannot be read ({exc}); not changed") from None
    if st.st_size > MAX_STATE_BYTES:
        raise EnablementError(f"{path} is larger than {MAX_STATE_BYTES} bytes; not changed")
    try:
        text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
        value = json.loads(text)
    except OSError as exc:
        raise EnablementError(f"{path} cannot be read ({exc}); not changed") from None
    except (ValueError, RecursionError) as exc:
        raise EnablementError(f"{path} is not valid JSON ({exc}); not changed") from None
    if not isinstance(value, dict):
        raise EnablementError(f"{path} is not a JSON object; not changed")
    return value, st.st_mode & 0o777


def _write(path: Path, text: str, *, mode: int) -> None:
    """Replace ``path`` atomically with ``text``, keeping ``mode``."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".claude.json-", dir=path.parent)
    except OSError as exc:
        raise EnablementError(f"{path} cannot be written ({exc}); not changed") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise EnablementError(f"{path} cannot be written ({exc}); not changed") from None
        raise
