"""Edit proposals waiting for the user's answer, checked against the buffers as the user types.

While a permission prompt for an edit is open, the user may keep typing in the file. At every
``didChange`` of such a file the proposal is merged (three-way, :mod:`lsp_agent.workspace.rebase`)
with the buffer's new text, and the client hears whether it still applies: a
``tool_call_update`` with ``proposal`` (docs/protocol.md §5.1) whenever the verdict changes.
So a review that went stale says so before the user approves, not after. Applying uses the same
merge (:meth:`lsp_agent.workspace.workspace.Workspace.apply`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from lsp_agent.protocol.events import (
    DiffItem,
    LineRange,
    ProposalStatus,
    ToolCall,
    ToolCallUpdate,
)
from lsp_agent.workspace.merge import merge3
from lsp_agent.workspace.rebase import describe_conflicts


def proposal_status(
    *, path: Path, label: str, base: str, proposal: str, current: str, version: int | None
) -> ProposalStatus:
    """How the change ``base → proposal`` of ``path`` relates to ``current`` (the buffer now,
    at ``version``). ``label`` names the file for the user. Pure."""
    if current == base:
        return ProposalStatus(
            path=str(path),
            status="current",
            message=f"The proposal matches {label} as it is now.",
            version=version,
        )
    merged = merge3(base, proposal, current, adjacent="combine")
    if merged.clean:
        return ProposalStatus(
            path=str(path),
            status="rebased",
            message=f"You changed other lines of {label}; the proposal still applies and "
            "keeps your changes.",
            version=version,
        )
    return ProposalStatus(
        path=str(path),
        status="stale",
        message=f"Stale: you changed {describe_conflicts(merged.conflicts)} of {label}, "
        "which the proposal changes too; approving it will fail. Reject it (or undo your "
        "change).",
        version=version,
        conflicts=tuple(
            LineRange(start=c.theirs_start + 1, end=max(c.theirs_end, c.theirs_start + 1))
            for c in merged.conflicts
        ),
    )


@dataclass(kw_only=True)
class _Waiting:
    key: int
    session_id: str
    tool_call_id: str
    path: Path
    label: str
    base: str
    proposal: str
    shown: tuple[str, tuple[LineRange, ...]] = ("current", ())


class PendingProposals:
    """The file changes of open permission prompts. Event-loop only."""

    def __init__(self) -> None:
        self._waiting: list[_Waiting] = []
        self._keys = itertools.count(1)

    def open(self, session_id: str, tool_call: ToolCall, *, labels: dict[Path, str]) -> int:
        """Track the diffs of ``tool_call`` (a prompt just sent); returns a key for
        :meth:`close`. New files (no old text) are not tracked: there is nothing to type in.
        ``labels`` maps paths to the names the user knows them by (else the full path)."""
        key = next(self._keys)
        for item in tool_call.content:
            if isinstance(item, DiffItem) and item.old_text is not None:
                path = Path(item.path)
                self._waiting.append(
                    _Waiting(
                        key=key,
                        session_id=session_id,
                        tool_call_id=tool_call.tool_call_id,
                        path=path,
                        label=labels.get(path, str(path)),
                        base=item.old_text,
                        proposal=item.new_text,
                    )
                )
        return key

    def close(self, key: int) -> None:
        """The prompt ``key`` was answered, withdrawn or timed out: stop tracking it."""
        self._waiting = [w for w in self._waiting if w.key != key]

    def paths(self) -> set[Path]:
        """The files pending proposals would change."""
        return {w.path for w in self._waiting}

    def check(self, path: Path, text: str, version: int | None) -> list[tuple[str, ToolCallUpdate]]:
        """The updates to send now that ``path`` holds ``text``: one ``(session id, update)``
        per proposal whose verdict (status or conflicting lines) changed."""
        updates: list[tuple[str, ToolCallUpdate]] = []
        for waiting in self._waiting:
            if waiting.path != path:
                continue
            status = proposal_status(
                path=path,
                label=waiting.label,
                base=waiting.base,
                proposal=waiting.proposal,
                current=text,
                version=version,
            )
            verdict = (status.status, status.conflicts)
            if verdict == waiting.shown:
                continue
            waiting.shown = verdict
            updates.append(
                (
                    waiting.session_id,
                    ToolCallUpdate(tool_call_id=waiting.tool_call_id, proposal=(status,)),
                )
            )
        return updates
