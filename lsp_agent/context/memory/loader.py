"""Load a session's memory: the files in Claude Code's order, imports expanded, trust applied.

:func:`load_memory` reads everything that loads at the start of a session;
:func:`load_on_demand` adds what a touched file brings in (a subfolder's ``CLAUDE.md`` and
rules, path-scoped rules). Both read through an :data:`~lsp_agent.context.memory.read.Overlay`
(the editor's unsaved text wins) and never raise: every problem becomes a
:class:`~lsp_agent.context.memory.types.MemoryNotice` and the rest still loads.

Trust: in an untrusted workspace nothing inside the workspace roots is read (no file, rule or
import); the managed file, the user's ``~/.claude`` files and ancestors above the roots are.
Imports (docs: "Import additional files"): relative to the importing file, ``~/`` and absolute
paths, at most :data:`MAX_IMPORT_HOPS` hops, cycles cut; an import that leaves the workspace from
a file inside it needs the user's approval (``external_imports``).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from lsp_agent.context.memory.automemory import load_auto_memory
from lsp_agent.context.memory.discover import (
    Candidate,
    ancestors_top_down,
    folder_candidates,
    holds_none,
    rule_files,
)
from lsp_agent.context.memory.markdown import ParsedMarkdown, parse_memory_markdown
from lsp_agent.context.memory.read import Overlay, exists, no_overlay, read_memory_text
from lsp_agent.context.memory.rules import (
    Frontmatter,
    glob_problem,
    rule_applies,
    split_frontmatter,
)
from lsp_agent.context.memory.types import (
    ImportRef,
    ImportStatus,
    LoadedMemory,
    MemoryFile,
    MemoryKind,
    MemoryNotice,
    NoticeCode,
    Span,
)
from lsp_agent.permissions.paths import is_secret

MAX_IMPORT_HOPS = 4
"""Imports may chain this many hops from a file of the load order (Claude Code's docs)."""

InstructionFiles = Literal["claude-md-or-agents-md", "claude-md-and-agents-md", "claude-md"]
"""Whether ``AGENTS.md`` is read: where a folder has no CLAUDE file (default), always, never."""

ExternalImports = Literal["ask", "approved", "declined"]
"""The user's answer about imports that leave the workspace from a file inside it."""

_AGENTS: dict[str, str] = {
    "claude-md-or-agents-md": "or",
    "claude-md-and-agents-md": "and",
    "claude-md": "never",
}


@dataclass(frozen=True, kw_only=True)
class MemorySpec:
    """What decides a session's memory. Paths are absolute. ``roots`` are the workspace
    folders (the session folder first); ``managed`` is the managed policy file (overridable for
    tests); ``excludes`` are ``claudeMdExcludes`` globs over absolute paths; ``auto_memory`` is
    the auto-memory index to load (``None``: auto memory off)."""

    cwd: Path
    roots: tuple[Path, ...]
    home: Path
    managed: Path
    trusted: bool
    excludes: tuple[str, ...] = ()
    instruction_files: InstructionFiles = "claude-md-or-agents-md"
    external_imports: ExternalImports = "ask"
    auto_memory: Path | None = None


class ParseCache:
    """Parsed files by (path, text), so an unchanged file is not parsed again each turn.
    Bounded (least recently used out first); owned by one session's store."""

    def __init__(self, *, size: int = 256) -> None:
        self._size = size
        self._items: OrderedDict[tuple[Path, bool, str], tuple[Frontmatter, ParsedMarkdown]] = (
            OrderedDict()
        )

    def parse(self, path: Path, text: str, *, rule: bool) -> tuple[Frontmatter, ParsedMarkdown]:
        """Frontmatter and Markdown of ``text``."""
        key = (path, rule, text)
        hit = self._items.get(key)
        if hit is not None:
            self._items.move_to_end(key)
            return hit
        front = split_frontmatter(path, text, rule=rule)
        parsed = parse_memory_markdown(front.body, line_offset=front.body_line)
        self._items[key] = (front, parsed)
        if len(self._items) > self._size:
            self._items.popitem(last=False)
        return front, parsed


def load_memory(
    spec: MemorySpec, *, overlay: Overlay = no_overlay, cache: ParseCache | None = None
) -> LoadedMemory:
    """Everything that loads at the start of a session, in load order; see the module
    docstring. Never raises."""
    loader = _Loader(spec=spec, overlay=overlay, cache=cache or ParseCache())
    loader.candidate(Candidate(path=spec.managed, kind="managed"))
    claude_home = spec.home / ".claude"
    loader.candidate(Candidate(path=claude_home / "CLAUDE.md", kind="user"))
    for path in rule_files(claude_home / "rules"):
        loader.candidate(Candidate(path=path, kind="user-rule", rule=True, base=spec.cwd))
    agents = _AGENTS[spec.instruction_files]
    for folder in ancestors_top_down(spec.cwd):
        for candidate in folder_candidates(folder, agents=agents):
            loader.candidate(candidate)
    if spec.auto_memory is not None:
        loader.consulted.append(spec.auto_memory)
        auto = load_auto_memory(spec.auto_memory, overlay=overlay)
        loader.files.append(auto.file)
        loader.notices.extend(auto.notices)
    return loader.result()


def load_on_demand(
    spec: MemorySpec,
    loaded: LoadedMemory,
    touched: Path,
    *,
    overlay: Overlay = no_overlay,
    cache: ParseCache | None = None,
    reals: dict[Path, Path] | None = None,
    empty: dict[Path, bool] | None = None,
) -> LoadedMemory:
    """What touching ``touched`` (absolute) adds to ``loaded``: the memory files of every
    folder below the session folder down to ``touched``'s folder, and the path-scoped rules
    (loaded ones and those of those folders) whose ``paths:`` match. Returns only the new files
    and notices (``rules`` holds the path-scoped rules of the new folders not matched yet).
    ``reals``: the caller's memo of the real paths (symlinks resolved) of ``loaded``'s files
    and rules, filled here, so a session touching files turn after turn resolves each of its
    memory files once per load instead of once per touch. ``empty``: the caller's memo, for
    one batch of touches made at once, of which folders hold no place a memory file may be
    (:func:`~lsp_agent.context.memory.discover.holds_none`), so files touched in the same
    folder look at it once. A folder that holds none adds nothing and is not among the
    load's ``consulted`` paths."""
    folder = touched if _is_dir(touched) else touched.parent
    bare = empty if empty is not None else {}
    below = [p for p in _below(folder, spec.cwd) if not holds_none(p, overlay, bare)]
    if not below and not loaded.rules:
        return LoadedMemory()  # no folder below the session's and no rule: nothing to look at
    loader = _Loader(spec=spec, overlay=overlay, cache=cache or ParseCache(), on_demand=True)
    known = reals if reals is not None else {}

    def real(path: Path) -> Path:
        found = known.get(path)
        if found is None:
            found = known[path] = _real(path)
        return found

    loader.seen.update(real(f.path) for f in loaded.files)
    for sub in below:
        for candidate in folder_candidates(sub, agents=_AGENTS[spec.instruction_files]):
            loader.candidate(candidate)
    pending = [(rule, real(rule.path)) for rule in loaded.rules]
    pending += [(rule, loader.real(rule.path)) for rule in loader.rules]
    for rule, where in pending:
        if where in loader.seen:
            continue
        if rule_applies(rule.globs, rule.base or spec.cwd, touched):
            scoped = Candidate(path=rule.path, kind=rule.kind, rule=True, base=rule.base)
            loader.candidate(scoped, scoped_now=True)
    result = loader.result()
    return LoadedMemory(
        files=result.files,
        notices=result.notices,
        imports=result.imports,
        rules=tuple(r for r in result.rules if loader.real(r.path) not in loader.seen),
        consulted=result.consulted,
    )


def analyze_file(
    spec: MemorySpec,
    path: Path,
    *,
    overlay: Overlay = no_overlay,
    cache: ParseCache | None = None,
) -> LoadedMemory:
    """``path`` read as a memory file on its own (what the editor shows for an open memory
    file): its imports, frontmatter and notices, under ``spec``'s trust. Never raises."""
    loader = _Loader(spec=spec, overlay=overlay, cache=cache or ParseCache())
    kind = memory_kind(path, spec)
    base = spec.cwd if kind == "user-rule" else rule_base(path)
    loader.candidate(
        Candidate(path=path, kind=kind, rule=is_rule(path), base=base), scoped_now=True
    )
    return loader.result()


def applying_to(
    spec: MemorySpec,
    path: Path,
    *,
    overlay: Overlay = no_overlay,
    cache: ParseCache | None = None,
) -> tuple[MemoryFile, ...]:
    """The memory files and rules that apply when the agent works on ``path``: everything
    loaded at start, plus the files and rules touching ``path`` would add. Never raises."""
    cache = cache or ParseCache()
    loaded = load_memory(spec, overlay=overlay, cache=cache)
    more = load_on_demand(spec, loaded, path, overlay=overlay, cache=cache)
    return (*loaded.files, *more.files)


def memory_kind(path: Path, spec: MemorySpec) -> MemoryKind:
    """The kind a file at ``path`` has by its name and place."""
    if path == spec.managed:
        return "managed"
    claude_home = spec.home / ".claude"
    if path == claude_home / "CLAUDE.md":
        return "user"
    if is_rule(path):
        return "user-rule" if _under(path, claude_home / "rules") else "project-rule"
    if path.name == "CLAUDE.local.md":
        return "local"
    if path.name == "AGENTS.md":
        return "agents"
    if path.name == "MEMORY.md" and path.parent.name == "memory":
        return "auto"
    return "project"


def is_rule(path: Path) -> bool:
    """Whether ``path`` is a rule file (``.claude/rules/**/*.md``)."""
    parts = path.parts
    return path.suffix == ".md" and any(
        parts[i] == ".claude" and parts[i + 1] == "rules" for i in range(len(parts) - 2)
    )


def rule_base(path: Path) -> Path | None:
    """The folder a rule's ``paths:`` are relative to (the one holding ``.claude``)."""
    parts = path.parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == ".claude" and parts[i + 1] == "rules":
            return Path(*parts[:i])
    return None


@dataclass(kw_only=True)
class _Loader:
    """Accumulates one load (local to one call)."""

    spec: MemorySpec
    overlay: Overlay
    cache: ParseCache
    on_demand: bool = False
    files: list[MemoryFile] = field(default_factory=list)
    rules: list[MemoryFile] = field(default_factory=list)
    notices: list[MemoryNotice] = field(default_factory=list)
    imports: list[ImportRef] = field(default_factory=list)
    consulted: list[Path] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)
    _reals: dict[Path, Path] = field(default_factory=dict)
    _resolved: dict[tuple[Path, str, str], Path | None] = field(default_factory=dict)
    _real_roots: tuple[Path, ...] | None = None

    def real(self, path: Path) -> Path:
        """``path`` with symlinks resolved (memoised for this load)."""
        found = self._reals.get(path)
        if found is None:
            found = self._reals[path] = _real(path)
        return found

    def result(self) -> LoadedMemory:
        return LoadedMemory(
            files=tuple(self.files),
            notices=tuple(self.notices),
            imports=tuple(self.imports),
            rules=tuple(self.rules),
            consulted=tuple(dict.fromkeys(self.consulted)),
        )

    # ---- one place in the load order ---------------------------------------------------------

    def candidate(self, candidate: Candidate, *, scoped_now: bool = False) -> None:
        """Load one place of the load order (with its imports). A rule with ``paths:`` waits in
        :attr:`rules` unless ``scoped_now`` (a touched file matched it)."""
        path = candidate.path
        self.consulted.append(path)
        if not exists(path, self.overlay) or not self._admitted(path, candidate.kind):
            return
        real = self.real(path)
        if real in self.seen:
            return
        if self._outside_by_link(path) and self.spec.external_imports != "approved":
            self.notices.append(
                MemoryNotice(
                    path=path,
                    code="symlink-outside",
                    message=f"{path} links to {real}, outside the workspace; approve imports "
                    "from outside the workspace to load it",
                )
            )
            return
        secret = None if candidate.kind in _USERS_OWN else is_secret(real, home=self.spec.home)
        if secret is not None:
            self.notices.append(
                MemoryNotice(
                    path=path,
                    code="symlink-secret",
                    message=f"{path} links to {real}, which is not loaded: {secret}",
                )
            )
            return
        text = self._read(path)
        if text is None:
            return
        front, parsed = self.cache.parse(path, text, rule=candidate.rule)
        self.notices.extend(front.notices)
        self._glob_notices(path, front)
        file = MemoryFile(
            path=path,
            kind=candidate.kind,
            text=parsed.text.strip("\n"),
            chars=len(text),
            globs=front.globs,
            base=candidate.base,
            on_demand=self.on_demand,
        )
        if candidate.rule and front.globs and not scoped_now:
            self.rules.append(file)
            return
        self.seen.add(real)
        self.files.extend(self._imports(file, parsed, chain=(real,)))
        self.files.append(file)

    # ---- imports -------------------------------------------------------------------------------

    def _imports(
        self, file: MemoryFile, parsed: ParsedMarkdown, *, chain: tuple[Path, ...]
    ) -> list[MemoryFile]:
        out: list[MemoryFile] = []
        for site in parsed.imports:
            target = self._resolve(file.path, site.target, site.bare)
            status, message = self._import_status(file, target, chain)
            self.imports.append(
                ImportRef(
                    source=file.path,
                    target=site.target,
                    span=site.span,
                    resolved=target,
                    status=status,
                )
            )
            if message is not None:
                severity = "information" if status == "needs-approval" else "warning"
                self.notices.append(
                    MemoryNotice(
                        path=file.path,
                        code=_CODES[status],
                        message=message,
                        span=site.span,
                        severity=severity,  # type: ignore[arg-type]
                    )
                )
            if status != "ok" or target is None:
                continue
            text = self._read(target)
            if text is None:
                self.imports[-1] = _with_status(self.imports[-1], "unreadable")
                continue
            real = self.real(target)
            self.seen.add(real)
            _, child_parsed = self.cache.parse(target, text, rule=False)
            child = MemoryFile(
                path=target,
                kind=file.kind,
                text=child_parsed.text.strip("\n"),
                chars=len(text),
                imported_by=file.path,
                depth=file.depth + 1,
                on_demand=self.on_demand,
            )
            out.extend(self._imports(child, child_parsed, chain=(*chain, real)))
            out.append(child)
        return out

    def _resolve(self, source: Path, written: str, bare: str) -> Path | None:
        key = (source.parent, written, bare)
        if key not in self._resolved:
            self._resolved[key] = self._resolve_now(source, written, bare)
        return self._resolved[key]

    def _resolve_now(self, source: Path, written: str, bare: str) -> Path | None:
        paths = []
        for target in dict.fromkeys((written, bare)):
            if target.startswith("~/"):
                paths.append(self.spec.home / target[2:])
            elif os.path.isabs(target):
                paths.append(Path(target))
            else:
                paths.append(source.parent / target)
        normal = [Path(os.path.normpath(p)) for p in paths]
        self.consulted.extend(normal)
        for path in normal:
            if exists(path, self.overlay) or _is_dir(path):
                return path
        return normal[0] if normal else None

    def _import_status(
        self, file: MemoryFile, target: Path | None, chain: tuple[Path, ...]
    ) -> tuple[ImportStatus, str | None]:
        if target is None:
            return "missing", "cannot resolve this import"
        if _is_dir(target):
            return "folder", f"{target} is a folder; import a file"
        if not exists(target, self.overlay):
            return "missing", f"imported file not found: {target}"
        real = self.real(target)
        if real in chain:
            return "cycle", f"import cycle: {target} is already being imported; cut here"
        if file.depth + 1 > MAX_IMPORT_HOPS:
            return "too-deep", (
                f"import chain too deep: {target} would be hop {file.depth + 1}; at most "
                f"{MAX_IMPORT_HOPS} hops are followed"
            )
        if self._in_workspace(target) and not self.spec.trusted:
            return "untrusted", f"{target} is inside an untrusted workspace; not loaded"
        if file.kind not in _USERS_OWN:
            secret = is_secret(real, home=self.spec.home)
            if secret is not None:
                return "secret", (
                    f"{target} is not imported: {secret}; only your own memory files "
                    "(~/.claude) may import it"
                )
        if self._in_workspace(file.path) and not self._inside_roots(real):
            if self.spec.external_imports == "declined":
                return "declined", f"imports from outside the workspace were declined: {target}"
            if self.spec.external_imports == "ask":
                return "needs-approval", (
                    f"{target} is outside the workspace: approve imports from outside the "
                    "workspace to load it"
                )
        if (file.kind != "managed" and self._excluded(target)) or real in self.seen:
            return "duplicate", None
        return "ok", None

    # ---- gates ---------------------------------------------------------------------------------

    def _admitted(self, path: Path, kind: MemoryKind) -> bool:
        """Not excluded by ``claudeMdExcludes`` (managed files cannot be) and, in an
        untrusted workspace, not inside it (reported once per file)."""
        if kind != "managed" and self._excluded(path):
            return False
        if not self.spec.trusted and self._in_workspace(path):
            self.notices.append(
                MemoryNotice(
                    path=path,
                    code="untrusted",
                    message="not loaded: the workspace is not trusted (trust it to give the "
                    "agent its memory files)",
                    severity="information",
                )
            )
            return False
        return True

    def _excluded(self, path: Path) -> bool:
        if not self.spec.excludes:
            return False
        from wcmatch import glob as wcglob  # only with claudeMdExcludes set

        names = {path.as_posix(), self.real(path).as_posix()}
        flags = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB
        for name in names:
            try:
                if wcglob.globmatch(name, list(self.spec.excludes), flags=flags, limit=1000):
                    return True
            except Exception:  # an invalid pattern excludes nothing
                continue
        return False

    def _in_workspace(self, path: Path) -> bool:
        return any(_under(path, r) for r in self.spec.roots) or self._inside_roots(self.real(path))

    def _inside_roots(self, real: Path) -> bool:
        if self._real_roots is None:  # resolved when first needed: most loads never ask
            self._real_roots = tuple(_real(r) for r in self.spec.roots)
        return any(_under(real, r) for r in self._real_roots)

    def _outside_by_link(self, path: Path) -> bool:
        """A file inside the workspace that is a symlink to a file outside it."""
        inside = any(_under(path, r) for r in self.spec.roots)
        return inside and not self._inside_roots(self.real(path))

    def _read(self, path: Path) -> str | None:
        result = read_memory_text(path, overlay=self.overlay)
        if result.notice is not None:
            self.notices.append(result.notice)
        return result.text

    def _glob_notices(self, path: Path, front: Frontmatter) -> None:
        for pattern in front.globs:
            problem = glob_problem(pattern)
            if problem is not None:
                self.notices.append(
                    MemoryNotice(
                        path=path, code="bad-glob", message=f"{problem}; it matches nothing"
                    )
                )


_USERS_OWN = frozenset({"managed", "user", "user-rule"})
"""Kinds whose imports may load files that hold secrets (the Read tool's rule: ``.env``,
credential files, private keys, ~/.ssh...): the user wrote them. A project's files (a
repository's ``CLAUDE.md``), and auto memory the agent writes, may not."""

_CODES: dict[str, NoticeCode] = {
    "missing": "missing-import",
    "cycle": "import-cycle",
    "too-deep": "import-too-deep",
    "needs-approval": "import-needs-approval",
    "declined": "import-declined",
    "untrusted": "import-untrusted",
    "folder": "import-is-folder",
    "unreadable": "unreadable",
    "secret": "import-secret",
}


def _with_status(ref: ImportRef, status: ImportStatus) -> ImportRef:
    return ImportRef(
        source=ref.source, target=ref.target, span=ref.span, resolved=ref.resolved, status=status
    )


def _real(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return path


def _under(path: Path, root: Path) -> bool:
    parts = root.parts
    return path.parts[: len(parts)] == parts


def _below(folder: Path, cwd: Path) -> list[Path]:
    """The folders from the one just below ``cwd`` down to ``folder``, top down (none when
    ``folder`` is ``cwd`` or not below it)."""
    parts, top = folder.parts, cwd.parts
    if len(parts) <= len(top) or parts[: len(top)] != top:
        return []
    out = [folder]
    for _ in range(len(parts) - len(top) - 1):
        out.append(out[-1].parent)
    out.reverse()
    return out


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


__all__ = [
    "MAX_IMPORT_HOPS",
    "ExternalImports",
    "InstructionFiles",
    "MemorySpec",
    "ParseCache",
    "Span",
    "analyze_file",
    "applying_to",
    "load_memory",
    "load_on_demand",
]
