"""Where a ``# note`` goes: the memory file the user picks, as Claude Code asks.

Claude Code answers a ``#`` prompt with a choice of memory file: the project's ``CLAUDE.md``
(checked in, shared with the team), the project's ``CLAUDE.local.md`` (the user's own notes for
this project) or the user's ``~/.claude/CLAUDE.md`` (every project). The question goes through
the door's ordinary permission prompt (``lspAgent/session/requestPermission``, one option per
file plus "Cancel"), so every client that can answer a permission prompt can answer it. A door
where nobody can answer (headless ``run -p``) does not ask: the note goes to the project's
``CLAUDE.md``, Claude Code's default choice.

Pure: builds the request and reads the answer; the session asks and writes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lsp_agent.protocol.events import ContentItem, TextContent, ToolCall
from lsp_agent.protocol.permissions import PermissionOption, PermissionRequest, PermissionResponse

NoteScope = Literal["project", "local", "user"]
"""The memory files a note may go to."""

CANCEL = "cancel"
"""The option id that adds the note nowhere."""


@dataclass(frozen=True, kw_only=True)
class NoteTarget:
    """One memory file a note may go to: ``scope``, the file, and what the choice is called."""

    scope: NoteScope
    path: Path
    label: str


def note_targets(*, cwd: Path, home: Path) -> tuple[NoteTarget, ...]:
    """The choices, in the order they are offered (the default first): the project's
    ``CLAUDE.md`` and ``CLAUDE.local.md`` in ``cwd``, the user's ``~/.claude/CLAUDE.md``."""
    return (
        NoteTarget(scope="project", path=cwd / "CLAUDE.md", label="Project memory"),
        NoteTarget(scope="local", path=cwd / "CLAUDE.local.md", label="Project memory (local)"),
        NoteTarget(scope="user", path=home / ".claude" / "CLAUDE.md", label="User memory"),
    )


def _shown(path: Path, home: Path) -> str:
    if path == home or home in path.parents:
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def target_request(
    *, session_id: str, note: str, targets: tuple[NoteTarget, ...], home: Path
) -> PermissionRequest:
    """The prompt that asks which of ``targets`` gets ``note``: one ``allow_once`` option per
    file (option id = its scope, name = its label and file) and a ``reject_once`` "Cancel"."""
    names = {
        "project": "checked in, shared with everyone working on the project",
        "local": "your own notes for this project (keep it out of version control)",
        "user": "your notes for every project",
    }
    lines = [f"Add this note to a memory file:\n\n- {note}\n"]
    lines += [f"- {t.label}: {_shown(t.path, home)} ({names[t.scope]})" for t in targets]
    lines.append("\nPicking a file adds the note there (a file under ~/.claude asks again).")
    text = "\n".join(lines)
    return PermissionRequest(
        session_id=session_id,
        tool_call=ToolCall(
            tool_call_id=f"memory_target_{uuid.uuid4().hex[:12]}",
            title=f"Add to memory: {note}",
            kind="other",
            status="pending",
            content=(ContentItem(content=TextContent(text=text)),),
            raw_input={"note": note, "files": {t.scope: str(t.path) for t in targets}},
        ),
        options=(
            *(
                PermissionOption(
                    option_id=t.scope,
                    name=f"{t.label} ({_shown(t.path, home)})",
                    kind="allow_once",
                )
                for t in targets
            ),
            PermissionOption(option_id=CANCEL, name="Cancel", kind="reject_once"),
        ),
        reason=text,
        scopes=(),
    )


def chosen_target(answer: PermissionResponse, targets: tuple[NoteTarget, ...]) -> NoteTarget | None:
    """The target ``answer`` picked, or ``None`` (cancelled, dismissed, or an option id that
    names none of ``targets``)."""
    if answer.outcome != "selected":
        return None
    return next((t for t in targets if t.scope == answer.option_id), None)
