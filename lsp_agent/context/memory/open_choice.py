"""``/memory`` opens a memory file: which one the user picks, and the paths when nobody can.

Claude Code's ``/memory`` lists the memory files and opens the one the user picks in their
editor. In an editor door the pick goes through the door's ordinary permission prompt (one
option per file in effect, plus "Don't open"), and the door opens the file
(``window/showDocument``). Where nobody can pick or nothing can be opened (``run -p``), the
answer lists the absolute paths instead, so a script or a terminal user can open them.

Pure: builds the request, reads the answer and formats the paths; the command asks and opens.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path

from lsp_agent.context.memory.listing import SCOPES, shown_path
from lsp_agent.context.memory.types import MemoryFile
from lsp_agent.protocol.events import ContentItem, TextContent, ToolCall
from lsp_agent.protocol.permissions import PermissionOption, PermissionRequest, PermissionResponse

MAX_CHOICES = 20
"""Files offered to open, at most (the first in load order)."""

DONT_OPEN = "dont_open"
"""The option id that opens nothing."""


def open_request(
    *, session_id: str, files: Sequence[MemoryFile], cwd: Path, home: Path
) -> PermissionRequest:
    """The prompt asking which of ``files`` (the first :data:`MAX_CHOICES`) to open: options
    ``file-0``, ``file-1``, … (kind ``allow_once``, named by path and scope) and
    ``dont_open`` (``reject_once``)."""
    offered = list(files)[:MAX_CHOICES]
    names = [f"{shown_path(f.path, cwd=cwd, home=home)} ({SCOPES[f.kind]})" for f in offered]
    text = "Open a memory file in the editor:\n\n" + "\n".join(f"- {n}" for n in names)
    return PermissionRequest(
        session_id=session_id,
        tool_call=ToolCall(
            tool_call_id=f"memory_open_{uuid.uuid4().hex[:12]}",
            title="Open a memory file",
            kind="read",
            status="pending",
            content=(ContentItem(content=TextContent(text=text)),),
            raw_input={"files": [str(f.path) for f in offered]},
        ),
        options=(
            *(
                PermissionOption(option_id=f"file-{i}", name=name, kind="allow_once")
                for i, name in enumerate(names)
            ),
            PermissionOption(option_id=DONT_OPEN, name="Don't open", kind="reject_once"),
        ),
        reason=text,
        scopes=(),
    )


def chosen_file(answer: PermissionResponse, files: Sequence[MemoryFile]) -> MemoryFile | None:
    """The file ``answer`` picked, or ``None`` (don't open, cancelled, an unknown id)."""
    if answer.outcome != "selected" or not answer.option_id:
        return None
    prefix, _, index = answer.option_id.partition("-")
    if prefix != "file" or not index.isdigit():
        return None
    position = int(index)
    return files[position] if position < min(len(files), MAX_CHOICES) else None


def paths_section(files: Sequence[MemoryFile]) -> str:
    """The absolute paths of ``files`` as a Markdown list under a heading (``""`` for none),
    for a door that cannot open them."""
    if not files:
        return ""
    lines = ["", "", "**Paths**", ""]
    lines += [f"- {f.path}" for f in files]
    return "\n".join(lines)
