"""``/memory`` opens a memory file: which one the user picks, and the paths when nobody can.

Claude Code's ``/memory`` lists the memory files and opens the one the user picks in their
editor, offering to create the project's and the user's ``CLAUDE.md`` when they do not exist
yet. In an editor door the pick goes through the door's ordinary permission prompt (one
option per file, a missing one marked "new", plus "Don't open"), and the door opens the file
(``window/showDocument``; the command first creates a new one, empty). Where nobody can pick
or nothing can be opened (``run -p``), the answer lists the absolute paths instead, so a
script or a terminal user can open them.

Builds the choices (one stat per file), the request, reads the answer and formats the paths;
the command asks, creates and opens.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lsp_agent.context.memory.listing import SCOPES, shown_path
from lsp_agent.context.memory.types import MemoryFile
from lsp_agent.protocol.events import ContentItem, TextContent, ToolCall
from lsp_agent.protocol.permissions import PermissionOption, PermissionRequest, PermissionResponse

MAX_CHOICES = 20
"""Files in effect offered to open, at most (the first in load order)."""

DONT_OPEN = "dont_open"
"""The option id that opens nothing."""


@dataclass(frozen=True, kw_only=True)
class OpenChoice:
    """One file ``/memory`` offers: its path, its name in the picker, and whether it exists
    (a missing one is named "(new)" and created empty when picked)."""

    path: Path
    label: str
    exists: bool


def open_choices(files: Sequence[MemoryFile], *, cwd: Path, home: Path) -> tuple[OpenChoice, ...]:
    """What ``/memory`` offers, in order: the files in effect (the first :data:`MAX_CHOICES`,
    each once; the auto-memory ``MEMORY.md`` is in effect before it exists), then, as Claude
    Code's picker does, the project's ``cwd/CLAUDE.md`` when neither it nor
    ``cwd/.claude/CLAUDE.md`` exists and the user's ``~/.claude/CLAUDE.md`` when it does not
    exist. A file missing on disk is labelled "(new)"."""
    choices: list[OpenChoice] = []
    seen: set[Path] = set()

    def offer(path: Path, scope: str) -> None:
        exists = path.is_file()
        name = shown_path(path, cwd=cwd, home=home)
        label = f"{name} ({scope})" if exists else f"{name} ({scope}, new)"
        choices.append(OpenChoice(path=path, label=label, exists=exists))
        seen.add(path)

    for file in files:
        if file.path not in seen and len(choices) < MAX_CHOICES:
            offer(file.path, SCOPES[file.kind])
    project = cwd / "CLAUDE.md"
    if not (project.exists() or (cwd / ".claude" / "CLAUDE.md").exists() or project in seen):
        offer(project, SCOPES["project"])
    user = home / ".claude" / "CLAUDE.md"
    if not user.exists() and user not in seen:
        offer(user, SCOPES["user"])
    return tuple(choices)


def open_request(*, session_id: str, choices: Sequence[OpenChoice]) -> PermissionRequest:
    """The prompt asking which of ``choices`` to open: options ``file-0``, ``file-1``, …
    (kind ``allow_once``, named by path and scope, "new" for a file to create) and
    ``dont_open`` (``reject_once``)."""
    names = [c.label for c in choices]
    text = "Open a memory file in the editor:\n\n" + "\n".join(f"- {n}" for n in names)
    return PermissionRequest(
        session_id=session_id,
        tool_call=ToolCall(
            tool_call_id=f"memory_open_{uuid.uuid4().hex[:12]}",
            title="Open a memory file",
            kind="read",
            status="pending",
            content=(ContentItem(content=TextContent(text=text)),),
            raw_input={"files": [str(c.path) for c in choices]},
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


def chosen_file(answer: PermissionResponse, choices: Sequence[OpenChoice]) -> OpenChoice | None:
    """The choice ``answer`` picked, or ``None`` (don't open, cancelled, an unknown id)."""
    if answer.outcome != "selected" or not answer.option_id:
        return None
    prefix, _, index = answer.option_id.partition("-")
    if prefix != "file" or not index.isdigit():
        return None
    position = int(index)
    return choices[position] if position < len(choices) else None


def paths_section(files: Sequence[MemoryFile]) -> str:
    """The absolute paths of ``files`` as a Markdown list under a heading (``""`` for none),
    for a door that cannot open them."""
    if not files:
        return ""
    lines = ["", "", "**Paths**", ""]
    lines += [f"- {f.path}" for f in files]
    return "\n".join(lines)
