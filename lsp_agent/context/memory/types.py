"""Plain data of project memory: the files loaded, their imports, and what went wrong.

Lines and columns are 0-based; columns count code points of the line (the LSP door converts
them to the negotiated encoding).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

MemoryKind = Literal[
    "managed", "user", "user-rule", "project", "local", "project-rule", "agents", "auto"
]
"""Where a memory file comes from (an imported file keeps the kind of the file importing it):
``managed`` the organisation's file, ``user`` ``~/.claude/CLAUDE.md``, ``user-rule``
``~/.claude/rules/**/*.md``, ``project`` a folder's ``CLAUDE.md`` or ``.claude/CLAUDE.md``,
``local`` ``CLAUDE.local.md``, ``project-rule`` ``.claude/rules/**/*.md``, ``agents``
``AGENTS.md``, ``auto`` the auto-memory index ``MEMORY.md``."""

Severity = Literal["error", "warning", "information"]

NoticeCode = Literal[
    "missing-import",
    "import-cycle",
    "import-too-deep",
    "import-needs-approval",
    "import-declined",
    "import-untrusted",
    "import-is-folder",
    "import-secret",
    "large-file",
    "file-too-large",
    "unreadable",
    "not-utf8",
    "binary",
    "untrusted",
    "symlink-outside",
    "symlink-secret",
    "frontmatter",
    "unknown-key",
    "bad-glob",
    "auto-memory-truncated",
]
"""What a :class:`MemoryNotice` is about (the LSP door uses it as the diagnostic code)."""

ImportStatus = Literal[
    "ok",
    "duplicate",
    "missing",
    "cycle",
    "too-deep",
    "needs-approval",
    "declined",
    "untrusted",
    "folder",
    "unreadable",
    "secret",
]
"""What became of one ``@import``: ``ok`` loaded, ``duplicate`` already loaded elsewhere (not
repeated), others say why it was not loaded."""


@dataclass(frozen=True, kw_only=True)
class Span:
    """A place in a file: ``line`` 0-based, ``start``/``end`` code-point columns of it."""

    line: int
    start: int
    end: int


@dataclass(frozen=True, kw_only=True)
class MemoryNotice:
    """Something about a memory file the user should know: a missing import, a file over the
    size cap, an unreadable file. ``path`` is the file it is shown on; ``span`` is ``None`` for
    the whole file. Notices never stop the rest of the memory from loading."""

    path: Path
    code: NoticeCode
    message: str
    severity: Severity = "warning"
    span: Span | None = None


@dataclass(frozen=True, kw_only=True)
class ImportRef:
    """One ``@path`` import as written in ``source`` at ``span`` (covering ``@`` and the path).

    ``target`` is the path as written (``\\ `` unescaped); ``resolved`` is the absolute path it
    names (``None`` when it could not be resolved); ``status`` says whether it was loaded."""

    source: Path
    target: str
    span: Span
    resolved: Path | None
    status: ImportStatus


@dataclass(frozen=True, kw_only=True)
class MemoryFile:
    """One loaded memory file. ``path`` is absolute as found (a symlink is not followed in
    it); ``text`` is what the model sees (frontmatter and block-level HTML comments removed);
    ``chars`` is the size of the file's full text in code points. ``imported_by`` names the
    file whose ``@import`` brought it in (``depth`` hops from a file found by the load order).
    ``globs`` are a rule's ``paths:`` patterns, relative to ``base`` (empty: always applies)."""

    path: Path
    kind: MemoryKind
    text: str
    chars: int
    imported_by: Path | None = None
    depth: int = 0
    globs: tuple[str, ...] = ()
    base: Path | None = None
    on_demand: bool = False
    """Added during the session because a tool touched a file it covers."""
    new: bool = False
    """Not on disk yet (the auto-memory index before anything is saved): in effect all the
    same (its guide is), shown as new."""


@dataclass(frozen=True, kw_only=True)
class LoadedMemory:
    """The result of one load, in load order (an imported file comes before the file that
    imports it). ``rules`` are path-scoped rules not loaded yet (they load when a tool touches a
    matching file); ``imports`` lists every import found, loaded or not; ``consulted`` every
    path whose change may change this result (for watching)."""

    files: tuple[MemoryFile, ...] = ()
    notices: tuple[MemoryNotice, ...] = ()
    imports: tuple[ImportRef, ...] = ()
    rules: tuple[MemoryFile, ...] = ()
    consulted: tuple[Path, ...] = ()

    def paths(self) -> frozenset[Path]:
        """The paths of the loaded files."""
        return frozenset(f.path for f in self.files)
