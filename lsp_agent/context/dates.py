"""The session's date: fixed in the cached system prompt, told again when the local date changes.

The environment part of the system prompt names the date the session started on, and stays
byte-identical for the whole session so its cached prefix is read by every request. When the
local date changes while the session runs (a session left open overnight), the model is told
with a short reminder appended to the conversation, as Claude Code does ("The date has
changed. Today's date is now …"), before the next request: at the next prompt or after the
next tool batch. When the conversation starts again (``/clear``, a compaction) the reminders
are gone with it, so the date the system prompt shows counts as the one the conversation
shows, and a different local date is told again.

The clock is a parameter (:class:`SessionDate.today`), so tests turn the date by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

DATE_CHANGED = (
    "<system-reminder>\nThe date has changed. Today's date is now {date}. DO NOT mention this "
    "to the user explicitly because they are already aware.\n</system-reminder>"
)
"""The reminder's text (Claude Code's wording); ``{date}`` is the ISO date (YYYY-MM-DD)."""


@dataclass(kw_only=True)
class SessionDate:
    """What one session's conversation knows of the date. ``today`` returns the local date
    now; ``start`` is the date its system prompt shows; ``shown`` the date the conversation
    last told the model (the system prompt's, or the last reminder's)."""

    today: Callable[[], date]
    start: date
    shown: date

    @classmethod
    def starting(cls, today: Callable[[], date]) -> SessionDate:
        """A session that starts now: its system prompt shows ``today()``."""
        now = today()
        return cls(today=today, start=now, shown=now)

    def reminder(self) -> str | None:
        """The reminder to append when the local date is no longer the one the conversation
        shows (it then counts as shown), else ``None``."""
        now = self.today()
        if now == self.shown:
            return None
        self.shown = now
        return DATE_CHANGED.format(date=now.isoformat())

    def restart(self) -> None:
        """The conversation starts again (``/clear``, compaction): only the system prompt's
        date is shown."""
        self.shown = self.start
