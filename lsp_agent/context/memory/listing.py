"""``/memory``'s answer: the memory files in effect for a session, as a Markdown table.

Pure: it formats what the loader found (:class:`~lsp_agent.context.memory.types.LoadedMemory`
plus the files added on demand) and reads nothing itself. Scopes use Claude Code's words
(managed, user, project, local, rules) so a user recognises where each file comes from.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsp_agent.context.memory.types import ImportRef, LoadedMemory, MemoryFile, MemoryKind
from lsp_agent.context.tokens import estimate_text

SCOPES: dict[MemoryKind, str] = {
    "managed": "managed",
    "user": "user",
    "user-rule": "user rule",
    "project": "project",
    "local": "local",
    "project-rule": "project rule",
    "agents": "project (AGENTS.md)",
    "auto": "auto memory",
}
"""The scope shown for each kind of memory file."""


def shown_path(path: Path, *, cwd: Path, home: Path) -> str:
    """``path`` relative to ``cwd`` when inside it, ``~/…`` when inside ``home``, else as is."""
    for base, prefix in ((cwd, ""), (home, "~/")):
        if path == base or base in path.parents:
            return prefix + path.relative_to(base).as_posix()
    return str(path)


def _imports(file: MemoryFile, refs: Sequence[ImportRef], *, cwd: Path, home: Path) -> str:
    own = [r for r in refs if r.source == file.path]
    if not own:
        return ""
    out = []
    for ref in own:
        where = shown_path(ref.resolved, cwd=cwd, home=home) if ref.resolved else ref.target
        out.append(f"`{where}`" + ("" if ref.status == "ok" else f" ({ref.status})"))
    return ", ".join(out)


def _scope(file: MemoryFile, *, cwd: Path, home: Path) -> str:
    scope = SCOPES[file.kind]
    if file.globs:
        scope += " for " + ", ".join(f"`{g}`" for g in file.globs)
    if file.imported_by is not None:
        scope += f", imported by `{shown_path(file.imported_by, cwd=cwd, home=home)}`"
    if file.on_demand:
        scope += ", loaded on demand"
    if file.new:
        scope += ", new"
    return scope


def memory_listing(
    loaded: LoadedMemory,
    *,
    added: Sequence[MemoryFile] = (),
    cwd: Path,
    home: Path,
) -> str:
    """The Markdown ``/memory`` shows: one table row per file in effect (``loaded.files`` in
    load order, then ``added``, the files loaded on demand) with its path, scope, size in
    tokens (the project's character estimate) and imports (with the status of any not
    loaded); then the path-scoped rules still waiting for a matching file, and the loader's
    notices. Paths are relative to ``cwd`` or ``~``."""
    files = [*loaded.files, *added]
    if not files:
        lines = [
            "No memory files are loaded for this session.",
            "",
            "Create `CLAUDE.md` in the project (or `~/.claude/CLAUDE.md` for every project), "
            "or start a prompt with `#` to add a note to the project's `CLAUDE.md`.",
        ]
    else:
        total = sum(estimate_text(f.text) for f in files)
        lines = [
            f"**Memory files in effect** ({len(files)}, about {total:,} tokens)",
            "",
            "| File | Scope | Tokens | Imports |",
            "| --- | --- | ---: | --- |",
        ]
        for f in files:
            where = shown_path(f.path, cwd=cwd, home=home)
            imports = _imports(f, loaded.imports, cwd=cwd, home=home)
            scope = _scope(f, cwd=cwd, home=home)
            lines.append(f"| `{where}` | {scope} | {estimate_text(f.text):,} | {imports} |")
    loaded_paths = {f.path for f in files}
    waiting = [r for r in loaded.rules if r.path not in loaded_paths]
    if waiting:
        lines += ["", "**Rules that load when a matching file is touched**", ""]
        lines += [
            f"- `{shown_path(r.path, cwd=cwd, home=home)}` for "
            + ", ".join(f"`{g}`" for g in r.globs)
            for r in waiting
        ]
    if loaded.notices:
        lines += ["", "**Notices**", ""]
        lines += [
            f"- `{shown_path(n.path, cwd=cwd, home=home)}`: {n.message}" for n in loaded.notices
        ]
    return "\n".join(lines)
