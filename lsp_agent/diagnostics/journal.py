"""Which documents a turn changed, from which text to which.

:class:`~lsp_agent.diagnostics.host.VerifyingHost` records every change the change-set pipeline
applies into the journal of the turn that applied it. The turn is found through a context
variable that :class:`~lsp_agent.diagnostics.turn.TurnVerification` sets when the turn starts:
tool calls run in tasks created by the turn, which inherit it, so concurrent sessions sharing
one host never see each other's edits.
"""

from __future__ import annotations

import contextvars
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
    closed: bool = False
    _taken: int = 0

    def record(self, change: AppliedChange) -> None:
        """Append ``change`` (ignored once the turn is over)."""
        if not self.closed:
            self.entries.append(change)

    def take(self) -> list[AppliedChange]:
        """The changes recorded since the previous call."""
        fresh = self.entries[self._taken :]
        self._taken = len(self.entries)
        return fresh


CURRENT_JOURNAL: contextvars.ContextVar[ChangeJournal | None] = contextvars.ContextVar(
    "lsp_agent_change_journal", default=None
)
"""The journal of the turn the current task works for (``None`` outside a verified turn)."""
