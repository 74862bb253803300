"""One session's memory, kept current: reloaded for every turn, on demand as tools touch files.

The store holds no copy of the files between turns that could go stale: :meth:`MemoryStore.load`
reads them again (editor buffers first), so an edit to a loaded file, made in the editor or on
disk, applies from the next turn, and trusting the workspace loads its files without a restart.
Parsing is cached by text, so an unchanged file costs a stat and a read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.context.memory.loader import MemorySpec, ParseCache, load_memory, load_on_demand
from lsp_agent.context.memory.read import Overlay, no_overlay
from lsp_agent.context.memory.render import render_memory, render_on_demand
from lsp_agent.context.memory.results import ToolCallSeen, searched_paths
from lsp_agent.context.memory.types import LoadedMemory, MemoryFile

TOUCHING_TOOLS: dict[str, tuple[str, ...]] = {
    "Read": ("file_path",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "Write": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "Grep": ("path",),
    "Glob": ("path",),
}
"""Tools whose input names a file or folder that brings in on-demand memory (input keys)."""


@dataclass(kw_only=True)
class MemoryStore:
    """See the module docstring. ``spec`` returns the current :class:`MemorySpec` (trust and
    settings are read again each time); ``overlay`` the editor's text of open files.
    Event-loop only."""

    spec: Callable[[], MemorySpec]
    overlay: Overlay = no_overlay
    cache: ParseCache = field(default_factory=ParseCache)
    loaded: LoadedMemory = field(default_factory=LoadedMemory)
    added: tuple[MemoryFile, ...] = ()
    """Files added on demand during the session (already in the conversation)."""
    triggers: dict[Path, Path] = field(default_factory=dict)
    """For each file added on demand, the touched path that brought it in."""

    def load(self) -> LoadedMemory:
        """Read the memory that loads at session start, as it is now. Never raises."""
        self.loaded = load_memory(self.spec(), overlay=self.overlay, cache=self.cache)
        return self.loaded

    def text(self) -> str | None:
        """:meth:`load` rendered for the model (``None`` without memory files)."""
        return render_memory(self.load().files)

    def touch(self, paths: Iterable[Path]) -> tuple[MemoryFile, ...]:
        """Files that touching ``paths`` (absolute) adds to the conversation, each once per
        session: subfolder memory files and path-scoped rules that match."""
        spec = self.spec()
        new: list[MemoryFile] = []
        for path in paths:
            known = LoadedMemory(
                files=(*self.loaded.files, *self.added, *new), rules=self.loaded.rules
            )
            more = load_on_demand(spec, known, path, overlay=self.overlay, cache=self.cache)
            for file in more.files:
                if file.path not in {g.path for g in new}:
                    new.append(file)
                    self.triggers.setdefault(file.path, path)
        self.added = (*self.added, *new)
        return tuple(new)

    def after_tools(self, calls: Sequence[ToolCallSeen]) -> str | None:
        """The message text for files that the finished tool calls ``calls`` (name, input,
        result text) bring in, or ``None``."""
        return render_on_demand(self.touch(batch_paths(calls)))


def touched_paths(uses: Sequence[tuple[str, dict[str, object]]]) -> tuple[Path, ...]:
    """The absolute paths named by tool calls (name, input) of :data:`TOUCHING_TOOLS`."""
    out: list[Path] = []
    for name, data in uses:
        for key in TOUCHING_TOOLS.get(name, ()):
            value = data.get(key)
            if isinstance(value, str) and "\0" not in value and Path(value).is_absolute():
                out.append(Path(value))
    return tuple(dict.fromkeys(out))


def batch_paths(calls: Sequence[ToolCallSeen]) -> tuple[Path, ...]:
    """The paths a batch of finished tool calls (name, input, result text or ``None``)
    touched: those their inputs name, then the files their Grep and Glob results list
    (bounded, see :mod:`~lsp_agent.context.memory.results`)."""
    named = touched_paths([(name, data) for name, data, _ in calls])
    return tuple(dict.fromkeys((*named, *searched_paths(calls))))


_MEMORY_TYPES = {
    "managed": "Managed",
    "user": "User",
    "user-rule": "User",
    "local": "Local",
    "project": "Project",
    "project-rule": "Project",
    "agents": "Project",
}


def hook_fields(file: MemoryFile, *, trigger: Path | None = None) -> dict[str, object] | None:
    """The ``InstructionsLoaded`` hook fields for ``file`` (Claude Code's names), or ``None``
    for auto memory (not an instruction file). ``trigger`` is the touched path of an on-demand
    load."""
    memory_type = _MEMORY_TYPES.get(file.kind)
    if memory_type is None:
        return None
    fields: dict[str, object] = {"file_path": str(file.path), "memory_type": memory_type}
    if file.imported_by is not None:
        fields["load_reason"] = "include"
        fields["parent_file_path"] = str(file.imported_by)
    elif file.on_demand and file.globs:
        fields["load_reason"] = "path_glob_match"
    elif file.on_demand:
        fields["load_reason"] = "nested_traversal"
    else:
        fields["load_reason"] = "session_start"
    if file.globs:
        fields["globs"] = list(file.globs)
    if trigger is not None:
        fields["trigger_file_path"] = str(trigger)
    return fields
