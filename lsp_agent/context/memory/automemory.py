"""Auto memory: notes the agent keeps for itself, in Claude Code's layout so one memory serves
both tools.

Layout (Claude Code's docs, "Auto memory"): ``~/.claude/projects/<project>/memory/MEMORY.md``,
an index with one line per memory, plus one topic file per memory read on demand. ``<project>``
is the git repository's main folder (shared by its worktrees and subfolders) or the session
folder outside git, with every character other than ASCII letters and digits replaced by
``-`` (``/home/me/app`` → ``-home-me-app``). The first 200 lines or 25 KB of the index load at
the start of every conversation, whichever is less.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lsp_agent.context.memory.read import Overlay, exists, read_memory_text
from lsp_agent.context.memory.types import MemoryFile, MemoryNotice

INDEX_MAX_LINES = 200
INDEX_MAX_BYTES = 25 * 1024
"""What of ``MEMORY.md`` loads (Claude Code: "first 200 lines or 25KB")."""

GUIDE = """\
You have a persistent auto-memory folder at {folder}. It survives this conversation; use it \
to remember what a future session in this project would need and cannot derive from the code: \
the user's preferences and corrections, decisions and their reasons, where outside information \
lives.
- Save a memory when the user corrects you, states a preference, or asks you to remember \
something. Do not save what the code, git history or the CLAUDE.md files already say.
- One topic file per memory (for example feedback_testing.md); then one line for it in \
MEMORY.md, the index: `- YYYY-MM-DD (source: user | observed) summary → topic_file.md`. Every \
entry carries its date and its source. Keep the index short (it loads into every conversation; \
only its first {lines} lines load); merge or drop stale entries rather than piling up.
- Read a topic file when its index line is relevant. Treat memories as possibly out of date: \
check them against the code before relying on them.
- Use the Write and Edit tools; the user may review and reject a memory like any edit."""


def project_root(cwd: Path) -> Path:
    """The folder auto memory is keyed by: the main folder of the git repository holding
    ``cwd`` (a linked worktree maps to its main worktree), else ``cwd``."""
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_dir():
                return folder
            if dot_git.is_file():
                return _main_worktree(dot_git) or folder
        except OSError:
            continue
    return cwd


def _main_worktree(dot_git: Path) -> Path | None:
    """The main worktree of a linked worktree's ``.git`` file (``gitdir: …/.git/worktrees/x``,
    whose ``commondir`` names the shared ``.git``)."""
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text[len("gitdir:") :].strip())
    if not gitdir.is_absolute():
        gitdir = dot_git.parent / gitdir
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    common_dir = Path(common) if Path(common).is_absolute() else gitdir / common
    return common_dir.resolve().parent


def project_slug(root: Path) -> str:
    """Claude Code's project folder name: ``/home/me/app`` → ``-home-me-app``."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(root))


def auto_memory_dir(*, home: Path, cwd: Path) -> Path:
    """``~/.claude/projects/<project>/memory`` for a session in ``cwd``."""
    return home / ".claude" / "projects" / project_slug(project_root(cwd)) / "memory"


@dataclass(frozen=True, kw_only=True)
class AutoMemory:
    """The index as it loads (``None`` when it cannot be read) and what to tell the user."""

    file: MemoryFile
    notices: tuple[MemoryNotice, ...] = ()


def load_auto_memory(index: Path, *, overlay: Overlay) -> AutoMemory:
    """The auto-memory entry of the memory block: the guide, then the index cut to
    :data:`INDEX_MAX_LINES` lines / :data:`INDEX_MAX_BYTES` bytes (a notice says when it was
    cut). A missing index is an empty memory. Never raises."""
    guide = GUIDE.format(folder=index.parent, lines=INDEX_MAX_LINES)
    notices: list[MemoryNotice] = []
    body = ""
    chars = 0
    new = not exists(index, overlay)
    if not new:
        result = read_memory_text(index, overlay=overlay)
        if result.notice is not None and result.text is None:
            notices.append(result.notice)
        text = result.text or ""
        chars = len(text)
        body, cut = _head(text)
        if cut:
            notices.append(
                MemoryNotice(
                    path=index,
                    code="auto-memory-truncated",
                    message=f"{index} is over {INDEX_MAX_LINES} lines or "
                    f"{INDEX_MAX_BYTES:,} bytes; only the beginning loads (shorten the index, "
                    "move details into topic files)",
                )
            )
    shown = body.strip("\n") or "(MEMORY.md is empty: nothing saved yet)"
    return AutoMemory(
        file=MemoryFile(path=index, kind="auto", text=f"{guide}\n\n{shown}", chars=chars, new=new),
        notices=tuple(notices),
    )


def _head(text: str) -> tuple[str, bool]:
    lines = text.split("\n")
    head = "\n".join(lines[:INDEX_MAX_LINES])
    cut = len(lines) > INDEX_MAX_LINES and any(line.strip() for line in lines[INDEX_MAX_LINES:])
    data = head.encode("utf-8")
    if len(data) > INDEX_MAX_BYTES:
        head = data[:INDEX_MAX_BYTES].decode("utf-8", "ignore")
        head = head[: head.rfind("\n")] if "\n" in head else head
        cut = True
    return head, cut
