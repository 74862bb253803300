"""The user's approvals of project MCP servers, pinned to the definition they approved.

Kept outside the repository, in the user's state folder (platformdirs: on Linux
``~/.local/state/lsp-agent/mcp-approvals.json``), mode 0600::

    {"version": 1, "projects": {"/abs/project": {"server": {"digest": "<sha256>",
                                                             "approved": true}}}}

A repository can therefore never approve its own servers, and an approval covers exactly the
definition the user saw: when ``.mcp.json`` changes the server (command, args, url...), its
digest changes and it needs approval again. A broken file reads as "nothing approved" (fail
closed) and is logged; writing replaces it atomically. The file earlier versions kept in
``~/.lsp-agent/mcp-approvals.json`` is moved there the first time approvals are read or
written (once: afterwards only the new file counts).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lsp_agent.store.file_lock import locked

log = logging.getLogger(__name__)

Answer = Literal["approved", "rejected"]

APPROVALS_FILE = "mcp-approvals.json"
"""The approvals file's name in the user's state folder."""

LEGACY_FILE = Path(".lsp-agent") / "mcp-approvals.json"
"""Where earlier versions kept approvals, relative to the home directory (migrated once)."""


@dataclass(frozen=True, kw_only=True)
class Approval:
    """The recorded answer for one server of one project: ``digest`` of the definition the
    user answered about, and whether they approved it."""

    digest: str
    approved: bool


def state_dir(home: Path) -> Path:
    """The lsp-agent state folder (platformdirs ``user_state_path``) of the user whose home
    directory is ``home``: the platform's folder, placed under ``home`` when it lies in the
    process's own home directory (so a different ``home`` gets its own folder)."""
    import platformdirs

    real = platformdirs.user_state_path("lsp-agent")
    try:
        return home / real.relative_to(Path.home())
    except ValueError:
        return real if home == Path.home() else home / ".local" / "state" / "lsp-agent"


def approvals_path(home: Path) -> Path:
    """The approvals file of the user whose home directory is ``home``."""
    return state_dir(home) / APPROVALS_FILE


def migrate(home: Path) -> None:
    """Move the approvals file of earlier versions (``~/.lsp-agent/mcp-approvals.json``) to
    :func:`approvals_path` when only the old one exists. Never raises (a failure is logged and
    the old file stays for the next try)."""
    old, new = home / LEGACY_FILE, approvals_path(home)
    try:
        if new.exists() or not old.is_file():
            return
        write_private_text(new, old.read_text("utf-8"))
        old.unlink()
        log.info("MCP approvals moved from %s to %s", old, new)
    except OSError as exc:
        log.warning("moving MCP approvals from %s to %s failed: %s", old, new, exc)


def write_private_text(path: Path, text: str) -> None:
    """Write ``path`` atomically with mode 0600 (its folder 0700). Raises ``OSError``."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=".mcp-approvals-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError) as exc:
        log.error(
            "MCP approvals file %s is unreadable (%s): no project server is approved", path, exc
        )
        return {}
    return data if isinstance(data, dict) else {}


def load_approvals(home: Path, project: Path) -> dict[str, Approval]:
    """Recorded answers for ``project`` (absolute), by server name. Never raises."""
    migrate(home)
    projects = _read(approvals_path(home)).get("projects")
    entries = projects.get(str(project)) if isinstance(projects, dict) else None
    out: dict[str, Approval] = {}
    if not isinstance(entries, dict):
        return out
    for name, entry in entries.items():
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("digest"), str)
            and isinstance(entry.get("approved"), bool)
        ):
            out[name] = Approval(digest=entry["digest"], approved=entry["approved"])
    return out


def record_approval(home: Path, project: Path, *, server: str, digest: str, approved: bool) -> None:
    """Save the user's answer about ``server`` (definition ``digest``) of ``project``.

    Writes the file atomically with mode 0600, under a lock so that answers saved at once by
    several processes are all kept. Raises ``OSError`` if it cannot be written.
    """
    migrate(home)
    path = approvals_path(home)
    with locked(path):  # another process's answer in between would be lost
        data = _read(path)
        projects = data.get("projects")
        if not isinstance(projects, dict):
            projects = {}
        entries = projects.get(str(project))
        if not isinstance(entries, dict):
            entries = {}
        entries[server] = {"digest": digest, "approved": approved}
        projects[str(project)] = entries
        data = {"version": 1, "projects": projects}
        write_private_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
