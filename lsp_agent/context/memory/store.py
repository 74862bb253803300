"""One session's memory, kept current: reloaded for every turn, on demand as tools touch files.

The store holds no copy of the files between turns that could go stale: :meth:`MemoryStore.load`
reads them again (editor buffers first) when anything they came from changed, so an edit to a
loaded file, made in the editor or on disk, applies from the next turn, and trusting the
workspace loads its files without a restart. "Changed" is decided by a fingerprint taken before
each load: the spec (trust, settings), the editor text or the stat (mtime, size, inode) of
every path the last load consulted (missing candidates and imports included) and of every
folder under a ``.claude/rules`` folder (a new rule). The stats of the consulted paths' folders
are taken too, but only to know which missing paths need a new stat (a file created in a
folder changes the folder's stat); a folder that changed for another reason does not reload
the memory. See :mod:`~lsp_agent.context.memory.fingerprint` for the system calls it spares.
Parsing is cached by text too. Files added on demand are read again the same way
(:meth:`MemoryStore.on_demand_now`, their own fingerprint), so an edit to one is seen too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.context.memory.fingerprint import Absent, FingerprintPlan, fingerprint
from lsp_agent.context.memory.loader import (
    MemorySpec,
    ParseCache,
    analyze_file,
    load_memory,
    load_on_demand,
)
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

    _key: object = None
    _added_now: tuple[object, tuple[MemoryFile, ...]] | None = None
    """The fingerprint of :attr:`added` and the files as :meth:`on_demand_now` read them."""
    _plan: tuple[LoadedMemory, FingerprintPlan, Absent] | None = None
    """The fingerprint plan of ``loaded`` (worked out again when ``loaded`` is replaced) and
    what its checks found missing."""
    _reals: tuple[LoadedMemory, dict[Path, Path]] | None = None
    """The real paths of the known memory files for :meth:`touch` (per ``loaded``: a reload
    starts afresh, so a file's link that changed is resolved again with it)."""

    def load(self, *, spec: MemorySpec | None = None) -> LoadedMemory:
        """The memory that loads at session start, as it is now: read again only when its
        fingerprint changed (module docstring). ``spec``: :attr:`spec` read by the caller
        for this check. Never raises."""
        spec = spec if spec is not None else self.spec()
        # Taken before the load: a change made while loading shows at the next call.
        if self._plan is None or self._plan[0] is not self.loaded:
            consulted = self.loaded.consulted
            if self._plan is not None and self._plan[1].paths == consulted:
                # A reload that consulted the same paths (the usual case): the plan holds, and
                # so does the memo of what is missing, which is about the folders, not the load.
                self._plan = (self.loaded, self._plan[1], self._plan[2])
            else:
                self._plan = (self.loaded, FingerprintPlan.of(consulted), Absent())
        _, plan, absent = self._plan
        files, _folders, trees = fingerprint(plan.paths, self.overlay, plan=plan, absent=absent)
        # The folders' stats only steer which paths the check stats (an entry created in a
        # folder changes its stat, so its missing files are stat'ed again); they are not part
        # of the key: a folder that gained an unrelated entry (a test run's cache in the
        # project, a file in a temporary folder above it) leaves the same memory, and a
        # reload would also cost the next check a fresh plan with an empty memo.
        key = (spec, files, trees)
        if key != self._key:
            self.loaded = load_memory(spec, overlay=self.overlay, cache=self.cache)
            if not plan.paths and self.loaded.consulted:
                # The first load: its key was taken with no paths to stat, so the next check
                # would read everything again. Check its own paths now, and read again after
                # that check, so that the load kept is never older than its key.
                return self.load(spec=spec)
        # Kept even when equal: a key taken with the plan of an earlier ``loaded`` holds other
        # (equal) path objects, and each later comparison would compare them path by path.
        self._key = key
        return self.loaded

    def on_demand_now(self) -> tuple[MemoryFile, ...]:
        """The files added on demand (:attr:`added`), each with its text as it is now (editor
        buffer first), read again only when their fingerprint changed. A file deleted, emptied
        or no longer admitted (trust) is left out. Never raises."""
        if not self.added:
            return ()
        spec = self.spec()
        key = (spec, self.added, fingerprint([f.path for f in self.added], self.overlay))
        if self._added_now is not None and self._added_now[0] == key:
            return self._added_now[1]
        now: list[MemoryFile] = []
        for file in self.added:
            again = analyze_file(spec, file.path, overlay=self.overlay, cache=self.cache)
            for found in again.files:
                if found.path == file.path and found.text.strip():
                    now.append(dataclasses.replace(file, text=found.text, chars=found.chars))
                    break
        self._added_now = (key, tuple(now))
        return self._added_now[1]

    def text(self) -> str | None:
        """:meth:`load` rendered for the model (``None`` without memory files)."""
        return render_memory(self.load().files)

    def touch(
        self, paths: Iterable[Path], *, spec: MemorySpec | None = None
    ) -> tuple[MemoryFile, ...]:
        """Files that touching ``paths`` (absolute) adds to the conversation, each once per
        session: subfolder memory files and path-scoped rules that match. ``spec``: as for
        :meth:`load`."""
        spec = spec if spec is not None else self.spec()
        if self._reals is None or self._reals[0] is not self.loaded:
            self._reals = (self.loaded, {})
        reals = self._reals[1]
        empty: dict[Path, bool] = {}  # for this batch only: a folder may gain a file later
        new: list[MemoryFile] = []
        for path in paths:
            known = LoadedMemory(
                files=(*self.loaded.files, *self.added, *new), rules=self.loaded.rules
            )
            more = load_on_demand(
                spec,
                known,
                path,
                overlay=self.overlay,
                cache=self.cache,
                reals=reals,
                empty=empty,
            )
            for file in more.files:
                if file.path not in {g.path for g in new}:
                    new.append(file)
                    self.triggers.setdefault(file.path, path)
        self.added = (*self.added, *new)
        return tuple(new)

    def after_batch(self, paths: Iterable[Path]) -> tuple[tuple[MemoryFile, ...], LoadedMemory]:
        """After a tool batch: what touching ``paths`` adds (:meth:`touch`), then the start
        memory as it is now (:meth:`load`), the settings read once for both."""
        spec = self.spec()
        added = self.touch(paths, spec=spec)
        return added, self.load(spec=spec)

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
            if isinstance(value, str) and "\0" not in value:
                path = Path(value)
                if path.is_absolute():
                    out.append(path)
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
