"""Memory that changed during a session, told to the model as a reminder appended to the
conversation instead of a rewrite of its start (which would rewrite the cached prompt prefix).

The session keeps what the conversation already holds (:func:`seen`: each file's text as the
start block or an earlier reminder showed it) and compares the memory loaded now with it
(:func:`changes_reminder`). Unsaved editor buffers count: the loader reads them first. A file
the conversation shows that no longer applies (:func:`dropped`) is not a reminder: the session
takes every memory text out (:data:`MEMORY_MARKERS`) and opens the conversation again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from lsp_agent.context.memory.render import ON_DEMAND_HEADER, render_file
from lsp_agent.context.memory.types import MemoryFile

CHANGED_HEADER = (
    "Memory files changed during this session. Their current contents below replace what the "
    "conversation showed of them earlier; follow these versions:"
)

REMINDER_OPEN = "<system-reminder>"

MEMORY_MARKERS = (f"{REMINDER_OPEN}\n\n{CHANGED_HEADER}", ON_DEMAND_HEADER)
"""How the memory texts added after the start block begin (change reminders, files loaded on
demand): what leaves the conversation when a memory file no longer applies."""


def seen(files: Sequence[MemoryFile]) -> dict[Path, str]:
    """Each file's text as it is shown to the model (files with only blank text are not)."""
    return {f.path: f.text for f in files if f.text.strip()}


def dropped(before: Mapping[Path, str], files: Sequence[MemoryFile]) -> bool:
    """Whether a file the conversation shows (``before``) is not among the memory ``files``
    loaded now (removed, emptied, excluded, or the workspace no longer trusted)."""
    now = seen(files)
    return any(path not in now for path in before)


def changes_reminder(before: Mapping[Path, str], files: Sequence[MemoryFile]) -> str | None:
    """The reminder for the memory ``files`` loaded now, given what the conversation holds
    (``before``, from :func:`seen`), or ``None`` when nothing changed. Changed and new files
    appear with their whole new text, in load order (files no longer there: :func:`dropped`)."""
    now = seen(files)
    sections = [
        render_file(f) for f in files if f.path in now and before.get(f.path) != now[f.path]
    ]
    if not sections:
        return None
    return "\n\n".join([REMINDER_OPEN, CHANGED_HEADER, *sections, "</system-reminder>"])
