"""Memory that changed during a session, told to the model as a reminder appended to the
conversation instead of a rewrite of its start (which would rewrite the cached prompt prefix).

The session keeps what the conversation already holds (:func:`seen`: each file's text as the
start block or an earlier reminder showed it) and compares the memory loaded now with it
(:func:`changes_reminder`). Unsaved editor buffers count: the loader reads them first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from lsp_agent.context.memory.render import render_file
from lsp_agent.context.memory.types import MemoryFile

CHANGED_HEADER = (
    "Memory files changed during this session. Their current contents below replace what the "
    "conversation showed of them earlier; follow these versions:"
)


def seen(files: Sequence[MemoryFile]) -> dict[Path, str]:
    """Each file's text as it is shown to the model (files with only blank text are not)."""
    return {f.path: f.text for f in files if f.text.strip()}


def changes_reminder(before: Mapping[Path, str], files: Sequence[MemoryFile]) -> str | None:
    """The reminder for the memory ``files`` loaded now, given what the conversation holds
    (``before``, from :func:`seen`), or ``None`` when nothing changed. Changed and new files
    appear with their whole new text, in load order; removed (or emptied, or no longer
    trusted) files are named."""
    now = seen(files)
    sections = [
        render_file(f) for f in files if f.path in now and before.get(f.path) != now[f.path]
    ]
    gone = [path for path in before if path not in now]
    if not sections and not gone:
        return None
    parts = ["<system-reminder>", CHANGED_HEADER, *sections]
    if gone:
        names = "\n".join(f"- {path}" for path in gone)
        parts.append(
            f"These memory files no longer apply (removed, emptied or excluded); ignore what "
            f"they said:\n{names}"
        )
    parts.append("</system-reminder>")
    return "\n\n".join(parts)
