"""Where memory files can be: the managed file, the user's files, a folder's files, rules.

Claude Code's locations (docs: "Choose where to put CLAUDE.md files"): the managed policy file
(``/etc/claude-code/CLAUDE.md`` on Linux), ``~/.claude/CLAUDE.md`` and ``~/.claude/rules/``,
and in every folder from the top of the file system down to the working folder ``CLAUDE.md``,
``.claude/CLAUDE.md``, ``.claude/rules/**/*.md`` and ``CLAUDE.local.md``; ``AGENTS.md`` where a
folder has none of the CLAUDE files (this project's choice, see docs/memory.md).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lsp_agent.config.loader import managed_dir
from lsp_agent.context.memory.read import Overlay, no_overlay
from lsp_agent.context.memory.types import MemoryKind

MAX_RULE_FILES = 500
"""Rule files read from one ``rules`` folder at most (a runaway tree must not stall a turn)."""


def managed_memory_path(platform: str | None = None) -> Path:
    """The managed policy ``CLAUDE.md`` of ``platform`` (default: this one)."""
    return managed_dir(platform) / "CLAUDE.md"


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """A place a memory file may be, in load order; ``rule`` files may carry ``paths:``
    globs relative to ``base``."""

    path: Path
    kind: MemoryKind
    rule: bool = False
    base: Path | None = None


def ancestors_top_down(folder: Path) -> tuple[Path, ...]:
    """``folder`` and its parents from the top down, without the file-system root itself."""
    chain = [folder, *folder.parents]
    return tuple(p for p in reversed(chain) if p.parent != p)


def rule_files(rules: Path) -> tuple[Path, ...]:
    """``*.md`` files under ``rules`` (recursively, following symlinked folders once), sorted
    by their path below it; at most :data:`MAX_RULE_FILES`."""
    found: list[Path] = []
    seen: set[str] = set()
    try:
        walker: Iterator[tuple[str, list[str], list[str]]] = os.walk(rules, followlinks=True)
        for top, dirs, files in walker:
            real = os.path.realpath(top)
            if real in seen:  # a symlink loop
                dirs[:] = []
                continue
            seen.add(real)
            dirs.sort()
            found.extend(Path(top) / name for name in sorted(files) if name.endswith(".md"))
            if len(found) >= MAX_RULE_FILES:
                break
    except OSError:
        return ()
    return tuple(sorted(found[:MAX_RULE_FILES], key=lambda p: p.relative_to(rules).parts))


def folder_candidates(folder: Path, *, agents: str) -> tuple[Candidate, ...]:
    """One folder's files in load order: ``CLAUDE.md``, ``.claude/CLAUDE.md``, its rules,
    ``CLAUDE.local.md``, then ``AGENTS.md`` when ``agents`` is ``"and"``, or ``"or"`` and the
    folder has none of the three CLAUDE files (``"never"``: no ``AGENTS.md``)."""
    claude = (folder / "CLAUDE.md", folder / ".claude" / "CLAUDE.md")
    local = folder / "CLAUDE.local.md"
    out = [Candidate(path=p, kind="project") for p in claude]
    out.extend(
        Candidate(path=p, kind="project-rule", rule=True, base=folder)
        for p in rule_files(folder / ".claude" / "rules")
    )
    out.append(Candidate(path=local, kind="local"))
    has_claude = any(_is_file(p) for p in (*claude, local))
    if agents == "and" or (agents == "or" and not has_claude):
        out.append(Candidate(path=folder / "AGENTS.md", kind="agents"))
    return tuple(out)


def holds_none(folder: Path, overlay: Overlay, memo: dict[Path, bool]) -> bool:
    """Whether ``folder`` holds no place a memory file may be, now: no ``CLAUDE.md``,
    ``CLAUDE.local.md`` or ``AGENTS.md`` file, no ``.claude`` folder (so no
    ``.claude/CLAUDE.md`` and no rules) and no editor buffer at any of those files. Most folders
    a tool touches hold none: four ``stat`` calls on strings then stand for the candidates'
    eight system calls and objects. Answers are kept in ``memo`` (folder → answer)."""
    known = memo.get(folder)
    if known is not None:
        return known
    memo[folder] = answer = _holds_none_now(folder, overlay)
    return answer


def _holds_none_now(folder: Path, overlay: Overlay) -> bool:
    base = os.fspath(folder)
    for name, kind in _PLACES:
        try:
            mode = os.stat(os.path.join(base, name)).st_mode
        except (OSError, ValueError):
            continue
        if kind(mode):
            return False
    if overlay is no_overlay:
        return True
    names = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "AGENTS.md")
    return all(overlay(folder / name) is None for name in names)


_PLACES = (
    ("CLAUDE.md", stat.S_ISREG),
    ("CLAUDE.local.md", stat.S_ISREG),
    ("AGENTS.md", stat.S_ISREG),
    (".claude", stat.S_ISDIR),
)
"""What :func:`holds_none` looks for in a folder: a memory file (``exists`` counts regular
files only) or the ``.claude`` folder that may hold one and the rules."""


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False
