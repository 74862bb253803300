"""Which documents a turn changed, from which text to which.

:meth:`~lsp_agent.workspace.workspace.Workspace.apply` records every change it applied into the
workspace's journal while one is open; verification
(:class:`~lsp_agent.diagnostics.turn.TurnVerification`) opens one for its turn and takes the
changes after each batch of tool calls. A workspace belongs to one session, so concurrent
sessions sharing one host never see each other's edits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.protocol.documents import TextSnapshot


@dataclass(frozen=True, kw_only=True)
class AppliedChange:
    """One document changed by the agent: ``base`` is the text it was computed from (``None``
    for a new file), ``new`` the resulting state (with the editor's new version for a buffer),
    ``at`` the monotonic time (seconds) it was applied."""

    path: Path
    base: TextSnapshot | None
    new: TextSnapshot
    at: float


@dataclass(kw_only=True)
class ChangeJournal:
    """The changes of one turn, in order. ``take()`` returns those not taken yet."""

    entries: list[AppliedChange] = field(default_factory=list)
    _taken: int = 0

    def record(self, change: AppliedChange) -> None:
        """Append ``change``."""
        self.entries.append(change)

    def take(self) -> list[AppliedChange]:
        """The changes recorded since the previous call."""
        fresh = self.entries[self._taken :]
        self._taken = len(self.entries)
        return fresh
