"""The headless door's :class:`Host`: the disk (through ``DiskHost``) plus a
sink for session updates, and a permission policy with nobody to ask."""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from lsp_agent.protocol.documents import ApplyResult, FileChange, TextSnapshot
from lsp_agent.protocol.events import SessionUpdate
from lsp_agent.protocol.host import Host
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse, Refusal

HEADLESS_REJECTION = (
    "Nobody can approve this in a non-interactive run (lsp-agent run -p). Allow it with "
    "--allowedTools or --permission-mode acceptEdits/bypassPermissions."
)
"""Feedback sent with the rejection when the core asks for permission anyway."""


def refuse_unattended(tool: str, request: PermissionRequest) -> Refusal:
    """The run's answer instead of a permission prompt (``AgentConfig.unattended``): a denial
    telling the model how the user could allow the call: the request's suggested rules as
    ``--allowedTools`` values when allowing them would let it in, and ``acceptEdits`` for an
    edit only the default mode asked about."""
    return Refusal(
        kind="denied",
        reason=(
            f"{tool} needs approval ({request.reason}) and this is a non-interactive run. "
            f"{_advice(request)}"
        ),
        rule=request.rule,
        source=request.source,
    )


def _advice(request: PermissionRequest) -> str:
    """How the user running ``run -p`` could let ``request``'s call in (one sentence, no
    final full stop)."""
    # A broken settings file's stand-in rules (permissions.decision.by_rule) ask whatever the
    # flags say: the way out is fixing the file.
    if request.reason.endswith("has errors, so every change asks until it is fixed"):
        return "No flag can allow it: the settings file must be fixed first"
    # "Always allow" is offered only when the suggested rules, allowed, would let the call in
    # (not past an ask rule or a protected path): only then are they worth naming.
    rules_help = any(option.kind == "allow_always" for option in request.options)
    if not (rules_help and request.suggested_rules):
        return "Allow it with --allowedTools or --permission-mode"
    rules = " ".join(shlex.quote(rule) for rule in request.suggested_rules)
    if request.source == "default" and request.tool_call.kind == "edit":
        return f"Allow it with --allowedTools {rules} or --permission-mode acceptEdits"
    return f"Allow it with --allowedTools {rules}"


class HeadlessHost:
    """Delegates files to ``inner`` (a disk host), sends updates to ``on_update`` and rejects
    every permission request (the executor never asks when ``AgentConfig.unattended`` is
    :func:`refuse_unattended`; this is the fail-closed backstop), unless ``approve`` (a
    background run's editor approval) answers it."""

    def __init__(
        self,
        *,
        inner: Host,
        on_update: Callable[[str, SessionUpdate], None],
        approve: Callable[[PermissionRequest], Awaitable[PermissionResponse]] | None = None,
    ) -> None:
        self._inner = inner
        self._on_update = on_update
        self._approve = approve
        self.permission_requests = 0

    def buffer(self, path: Path) -> TextSnapshot | None:
        """No editor: never a buffer (the disk is read)."""
        return self._inner.buffer(path)

    async def apply_changes(self, changes: Sequence[FileChange], *, label: str) -> ApplyResult:
        """Write the changes on disk (see ``DiskHost``)."""
        return await self._inner.apply_changes(changes, label=label)

    async def request_permission(self, request: PermissionRequest) -> PermissionResponse:
        """Reject, with feedback telling the model how the user could allow it; a background
        run's ``approve`` (the editor's answer) instead when it has one."""
        self.permission_requests += 1
        if self._approve is not None:
            return await self._approve(request)
        return PermissionResponse(
            outcome="selected", option_id="reject_once", feedback=HEADLESS_REJECTION
        )

    async def save_documents(self, paths: Sequence[Path]) -> dict[Path, str]:
        """Nothing to save: the disk is the only copy."""
        return await self._inner.save_documents(paths)

    async def files_changed_on_disk(self, paths: Sequence[Path]) -> None:
        """Nothing to refresh."""
        await self._inner.files_changed_on_disk(paths)

    def emit(self, session_id: str, update: SessionUpdate) -> None:
        """Hand the update to the renderer."""
        self._on_update(session_id, update)
