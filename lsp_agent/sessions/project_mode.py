"""A repository cannot switch off permission prompts by itself.

Trusting a workspace applies its ``.claude/settings.json`` rules and hooks, but a
``permissions.defaultMode`` of ``bypassPermissions`` from the repository's own settings files
(``.claude/settings.json``, ``.claude/settings.local.json``), or ``acceptEdits`` there together
with ``additionalDirectories`` that reach outside the project, needs its own confirmation: the
session starts in the door's mode (``default`` unless the user chose another) and, before its
first prompt, the user is asked — naming the file and the mode — through the door's ordinary
permission prompt. A "yes" is remembered per file content (SHA-256): the same file does not ask
again, a changed one does. Doors where nobody can answer (headless runs) never apply it; there
the mode must be given on the command line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from lsp_agent.config.loader import LoadedSettings
from lsp_agent.protocol.events import ContentItem, TextContent, ToolCall
from lsp_agent.protocol.host import Host
from lsp_agent.protocol.permissions import (
    PermissionMode,
    PermissionOption,
    PermissionRequest,
    PermissionResponse,
)

log = logging.getLogger(__name__)

PROJECT_SOURCES = frozenset({"project", "local"})
"""Settings layers that live in the repository (and so may come from its author)."""

FILE_NAME = "project-mode-approvals.json"


@dataclass(frozen=True, kw_only=True)
class PendingMode:
    """A project-supplied ``mode`` from ``file`` (whose content has SHA-256 ``digest``) that
    waits for the user's confirmation."""

    mode: PermissionMode
    file: Path
    digest: str

    @property
    def key(self) -> str:
        """How approvals remember it: the file and its content."""
        return f"{self.file}#{self.digest}"


def pending_project_mode(loaded: LoadedSettings, *, cwd: Path) -> PendingMode | None:
    """The ``defaultMode`` in force when it comes from the repository and needs confirming
    (see the module docstring), else ``None``."""
    layer = next(
        (lay for lay in loaded.applied() if lay.settings.permissions.default_mode is not None),
        None,
    )
    if layer is None or layer.source not in PROJECT_SOURCES or layer.path is None:
        return None
    mode = layer.settings.permissions.default_mode
    if mode == "acceptEdits":
        outside = [d for d in loaded.additional_directories() if not d.is_relative_to(cwd)]
        if not outside:
            return None
    elif mode != "bypassPermissions":
        return None
    assert mode is not None
    try:
        digest = hashlib.sha256(layer.path.read_bytes()).hexdigest()
    except OSError:
        digest = "unreadable"
    return PendingMode(mode=mode, file=layer.path, digest=digest)


def default_approvals_path() -> Path:
    """``<user state dir>/lsp-agent/project-mode-approvals.json`` (platformdirs)."""
    import platformdirs

    return platformdirs.user_state_path("lsp-agent") / FILE_NAME


class ModeApprovals:
    """Confirmed project modes, by file and content hash; ``path`` ``None`` keeps them for
    this process only. A broken file counts as "nothing confirmed" (asking again)."""

    def __init__(self, *, path: Path | None) -> None:
        self.path = path
        self._memory: set[str] = set()

    def approved(self, pending: PendingMode) -> bool:
        """Whether the user confirmed this mode for this exact file content."""
        return pending.key in self._read()

    def approve(self, pending: PendingMode) -> None:
        """Remember the confirmation. Raises ``OSError`` when the file cannot be written (it
        then still holds for this process)."""
        keys = self._read() | {pending.key}
        self._memory = set(keys)
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".mode-approvals-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(sorted(keys), handle, indent=2)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _read(self) -> set[str]:
        if self.path is None:
            return set(self._memory)
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return set(self._memory)
        except (OSError, ValueError, RecursionError) as exc:
            log.warning("ignoring unreadable %s: %s", self.path, exc)
            return set(self._memory)
        stored = {item for item in raw if isinstance(item, str)} if isinstance(raw, list) else set()
        return stored | self._memory


def mode_request(
    session_id: str, pending: PendingMode, *, current: PermissionMode
) -> PermissionRequest:
    """The permission prompt that asks to confirm ``pending`` (the session runs in
    ``current`` until then)."""
    what = (
        "every tool call runs without asking (deny rules, ask rules and protected paths still "
        "apply)"
        if pending.mode == "bypassPermissions"
        else "edits run without asking, also in the directories its additionalDirectories add"
    )
    text = (
        f"The project file {pending.file} sets permissions.defaultMode to "
        f"{pending.mode!r}: {what}. A repository can write that file, so it needs your "
        f"confirmation. Until you confirm, this session runs in {current!r} mode. A confirmation "
        "is remembered for this exact content of the file."
    )
    return PermissionRequest(
        session_id=session_id,
        tool_call=ToolCall(
            tool_call_id=f"mode_{uuid.uuid4().hex[:12]}",
            title=f"Use {pending.mode} mode from {pending.file}?",
            kind="other",
            status="pending",
            content=(ContentItem(content=TextContent(text=text)),),
            raw_input={"defaultMode": pending.mode, "file": str(pending.file)},
        ),
        options=(
            PermissionOption(option_id="allow_once", name=f"Use {pending.mode}", kind="allow_once"),
            PermissionOption(option_id="reject_once", name=f"Keep {current}", kind="reject_once"),
        ),
        reason=text,
        source="project",
        scopes=(),
    )


def confirmed(answer: PermissionResponse, request: PermissionRequest) -> bool:
    """Whether ``answer`` confirms the mode of ``request``."""
    return answer.kind(request.options) in ("allow_once", "allow_always")


async def ask_to_confirm(
    host: Host,
    *,
    session_id: str,
    pending: PendingMode,
    approvals: ModeApprovals,
    current: PermissionMode,
) -> bool:
    """Ask the user (through ``host``'s permission prompt) to confirm ``pending``; a yes is
    remembered in ``approvals``. Whether the mode may be used."""
    request = mode_request(session_id, pending, current=current)
    answer = await host.request_permission(request)
    if not confirmed(answer, request):
        log.info("project mode %s from %s declined", pending.mode, pending.file)
        return False
    try:
        approvals.approve(pending)
    except OSError as exc:
        log.warning("could not remember the confirmation of %s: %s", pending.file, exc)
    return True
