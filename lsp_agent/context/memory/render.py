"""Memory as the model reads it: one block, each file headed by its path and what it is."""

from __future__ import annotations

from collections.abc import Sequence

from lsp_agent.context.memory.types import MemoryFile, MemoryKind

MEMORY_HEADER = (
    "Codebase and user instructions are shown below. Follow these instructions: they take "
    "precedence over default behaviour."
)

ON_DEMAND_HEADER = (
    "More instructions apply to the files you are working with now; follow them for work there:"
)

_WHAT: dict[MemoryKind, str] = {
    "managed": "managed instructions of the organisation, for all projects",
    "user": "user's private global instructions for all projects",
    "user-rule": "user's rule for all projects",
    "project": "project instructions, checked into the codebase",
    "local": "user's private project instructions, not checked in",
    "project-rule": "project rule",
    "agents": "project instructions for coding agents (AGENTS.md)",
    "auto": "auto memory: notes saved in earlier sessions; may be out of date",
}


def describe(file: MemoryFile) -> str:
    """What ``file`` is, in words (``"project rule for src/**/*.ts"``)."""
    what = _WHAT[file.kind]
    if file.globs:
        what += " for " + ", ".join(file.globs)
    if file.imported_by is not None:
        what += f"; imported by {file.imported_by}"
    return what


def render_file(file: MemoryFile) -> str:
    """One file's section: ``Contents of PATH (what):`` and its text."""
    return f"Contents of {file.path} ({describe(file)}):\n\n{file.text}"


def render_memory(files: Sequence[MemoryFile]) -> str | None:
    """The memory block for the start of the conversation, or ``None`` without files.
    Byte-stable: the same files give the same text."""
    sections = [render_file(f) for f in files if f.text.strip()]
    if not sections:
        return None
    return "\n\n".join([MEMORY_HEADER, *sections])


def render_on_demand(files: Sequence[MemoryFile]) -> str | None:
    """The message that adds files loaded mid-session (a subfolder's CLAUDE.md, a rule that
    matched a touched file), or ``None``."""
    sections = [render_file(f) for f in files if f.text.strip()]
    if not sections:
        return None
    return "\n\n".join([ON_DEMAND_HEADER, *sections])
