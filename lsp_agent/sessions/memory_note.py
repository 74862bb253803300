"""``# note`` prompts: a prompt starting with ``#`` adds its text to a memory file.

As in Claude Code, ``# Always run the linter`` does not go to the model: the user picks the
memory file (the project's ``CLAUDE.md``, the project's ``CLAUDE.local.md`` or their
``~/.claude/CLAUDE.md``; see :mod:`lsp_agent.context.memory.note_target`; a door where nobody
can answer uses the project's ``CLAUDE.md``), the text becomes a ``- Always run the linter``
bullet at the end of that file (created when missing), and the next turn's memory includes it.
The write is an ordinary ``Write`` call run by the tool executor, so it passes the permission
engine like any other edit (deny rules and ``plan`` mode refuse it, an ask rule and
``~/.claude`` ask again with the diff) and it goes through the workspace, so an open, unsaved
editor buffer is edited rather than overwritten. Picking the file is the approval the default
mode would ask for (the question names the note and the file), so the user is asked once; the
write then shows as an edit card with its diff.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from uuid import uuid4

from lsp_agent.agent.executor import ExecutorEnv, Unattended, execute_tool_uses
from lsp_agent.context.commands import CommandOutcome
from lsp_agent.context.memory.gitignore import needs_ignore
from lsp_agent.context.memory.note_target import (
    NoteTarget,
    chosen_target,
    note_targets,
    target_request,
)
from lsp_agent.model.types import ToolUseBlock
from lsp_agent.protocol.permissions import PermissionRequest, Refusal
from lsp_agent.tools.registry import ToolRegistry
from lsp_agent.tools.write import WriteTool

if TYPE_CHECKING:
    from lsp_agent.sessions.manager import Session

# One "#" then the note; "##" and more (a pasted Markdown heading) stay ordinary prompts.
_NOTE = re.compile(r"\A\s*#(?!#)[ \t]*(\S.*)\Z", re.DOTALL)


def parse_memory_note(text: str) -> str | None:
    """The note a ``# note`` prompt adds (stripped, line breaks folded to spaces), or
    ``None`` for an ordinary prompt (no leading ``#``, ``##…``, or nothing after the ``#``)."""
    match = _NOTE.match(text)
    if match is None:
        return None
    return " ".join(match.group(1).split())


def with_bullet(text: str, note: str) -> str:
    """``text`` with ``- note`` appended as its last line (a separating newline added when
    ``text`` does not end with one)."""
    return with_line(text, f"- {note}")


def with_line(text: str, line: str) -> str:
    """``text`` with ``line`` appended as its last line (a separating newline added when
    ``text`` does not end with one)."""
    if text and not text.endswith("\n"):
        text += "\n"
    return f"{text}{line}\n"


async def choose_target(session: Session, note: str) -> NoteTarget | None:
    """The memory file the user picks for ``note`` (``None``: cancelled). Without anyone to
    ask (``config.unattended``: a headless run) the project's ``CLAUDE.md``."""
    home = session.memory.spec().home if session.memory is not None else Path.home()
    targets = note_targets(cwd=session.cwd, home=home)
    if session.config.unattended is not None:
        return targets[0]
    request = target_request(session_id=session.id, note=note, targets=targets, home=home)
    return chosen_target(await session.host.request_permission(request), targets)


async def add_memory_note(session: Session, note: str) -> CommandOutcome:
    """Ask which memory file gets ``note``, then append it as a bullet there through a
    ``Write`` call (permission engine, workspace, edit card). The outcome says where it went,
    or why not (cancelled, refused, rejected, the file is not text)."""
    target = await choose_target(session, note)
    if target is None:
        return CommandOutcome(text="The note was not added to memory.")
    path = target.path
    created = not path.exists()
    problem = await write_through_executor(
        session,
        path,
        lambda old: with_bullet(old, note),
        # The user picked this file for this note: that answers the default mode's ask.
        approved=session.config.unattended is None,
        unattended=naming_the_rule(session.config.unattended, note_rule(path, session.cwd)),
    )
    if problem is not None:
        return CommandOutcome(text=f"The note was not added to {path}: {problem}", is_error=True)
    text = f"Added to {path} ({target.label.lower()}): - {note}"
    if target.scope == "local" and created:
        text += await ignore_local_file(session, path)
    return CommandOutcome(text=text)


def note_rule(path: Path, cwd: Path) -> str:
    """The permission rule that allows writing ``path``, as a user would type it in
    ``--allowedTools``: ``Edit(CLAUDE.md)`` for a file directly in ``cwd``, else
    ``Edit(//absolute/path)`` (the rules' absolute form; ``Edit`` rules cover ``Write``)."""
    return f"Edit({path.name})" if path.parent == cwd else f"Edit(/{path})"


def naming_the_rule(refuse: Unattended | None, rule: str) -> Unattended | None:
    """``refuse`` (the door's answer when nobody can approve a call) asked with ``rule`` as the
    request's one suggested rule, so that whatever advice the door gives names the rule that
    lets notes in rather than the written file's absolute path."""
    if refuse is None:
        return None

    def refuse_note(tool: str, request: PermissionRequest) -> Refusal | None:
        named = request.model_copy(
            update={"suggested_rules": (rule,), "suggested_rule_labels": (rule,)}
        )
        return refuse(tool, named)

    return refuse_note


async def write_through_executor(
    session: Session,
    path: Path,
    edit: Callable[[str], str],
    *,
    approved: bool = False,
    unattended: Unattended | None = None,
) -> str | None:
    """Write ``edit(old text)`` to ``path`` (``old`` = ``""`` when missing) as a ``Write``
    call run by the tool executor (permission engine, workspace, edit card). ``approved``: the
    user already agreed to this write, so the default mode does not ask again (rules, ``plan``
    and protected paths still decide, :meth:`PermissionEngine.approved`). ``unattended``
    replaces the session's answer when nobody can be asked (``None``: the session's).
    ``None`` when written, else why not (the file is not text, refused, rejected, the write
    failed)."""
    ctx = session.tool_context()
    try:
        snapshot = session.workspace.read(path)
    except FileNotFoundError:
        old = ""
    except (OSError, ValueError) as exc:
        return str(exc)
    else:
        old = snapshot.text
        # The user saw nothing stale: the new text is built from exactly this snapshot, and
        # the Write tool refuses it if the file changes before it is applied.
        session.read_state.digests[path] = snapshot.digest
    block = ToolUseBlock(
        id=f"memory_note_{uuid4().hex}",
        name=WriteTool.name,
        input={"file_path": str(path), "content": edit(old)},
    )
    permissions = session.permissions
    if approved:
        permissions = permissions.approved(tool=WriteTool.name, raw_input=block.input, paths=[path])
    env = ExecutorEnv(
        tools=ToolRegistry(tools=[WriteTool()]),
        permissions=permissions,
        ctx=ctx,
        hooks=session.hooks,
        unattended=unattended or session.config.unattended,
    )
    [result] = await execute_tool_uses([block], env=env, results={})
    if result.is_error:
        return result.content if isinstance(result.content, str) else "the write failed"
    return None


async def ignore_local_file(session: Session, path: Path) -> str:
    """Keep a just-created ``CLAUDE.local.md`` out of version control, as Claude Code does:
    when its folder is in a git work tree where the file is not ignored yet, append its name
    to the ``.gitignore`` next to it (so the entry stays inside the project) through the same
    reviewed ``Write`` path as the note. Returns a sentence for the outcome (``""``: nothing
    to do)."""
    if not needs_ignore(path):
        return ""
    gitignore = path.parent / ".gitignore"
    problem = await write_through_executor(
        session, gitignore, lambda old: with_line(old, path.name)
    )
    if problem is not None:
        return f"\n\n{path.name} was not added to {gitignore}: {problem}"
    return f"\n\nAdded {path.name} to {gitignore}, so it stays out of version control."
