"""Memory files as a language the server understands (docs/memory.md, "In the editor").

For an open memory file (``CLAUDE.md``, ``CLAUDE.local.md``, ``AGENTS.md``, ``.claude/rules/**``,
an auto-memory ``MEMORY.md``, or any file a loaded memory file imports):

* ``textDocument/publishDiagnostics`` after open, change and save: missing imports, cycles,
  chains over 4 hops, imports outside the workspace awaiting approval, files over the size cap,
  unknown rule frontmatter keys, bad globs, an untrusted workspace;
* ``textDocument/documentLink`` on each ``@import`` to the file it names;
* ``textDocument/hover`` on an import: the resolved path, its size in characters and tokens
  (chars/4) and whether it loads;
* ``textDocument/completion`` of paths after ``@`` (relative to the file's folder);
* a code action on an import awaiting approval runs ``lspAgent.memory.approveImports``.

Changes on disk to the files an open memory document uses (``watchfiles`` on their folders:
the document itself, its imports, missing ones included) republish the diagnostics of open
documents, so creating an import target clears its "missing" diagnostic without an edit.

For any other file, ``textDocument/codeLens`` on its first line says which memory files and
rules apply when the agent works on it ("2 memory files, 1 rule").

Everything is computed with the session's loader, under the workspace's current trust, from
the editor's buffers first. Positions are converted to the negotiated encoding here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from lsp_agent.context.memory.approvals import ImportApprovals
from lsp_agent.context.memory.discover import managed_memory_path
from lsp_agent.context.memory.loader import (
    MemorySpec,
    ParseCache,
    analyze_file,
    applying_to,
    load_memory,
)
from lsp_agent.context.memory.options import memory_options
from lsp_agent.context.memory.render import describe
from lsp_agent.context.memory.types import ImportRef, LoadedMemory, MemoryNotice, Span
from lsp_agent.context.tokens import estimate_text
from lsp_agent.diagnostics.positions import (
    PositionEncoding,
    from_code_points,
    split_lines,
    to_code_points,
)
from lsp_agent.lsp.methods import COMMAND_APPROVE_IMPORTS

if TYPE_CHECKING:
    from lsp_agent.lsp.server import AgentLanguageServer

logger = logging.getLogger(__name__)

SOURCE = "lsp-agent memory"
MAX_COMPLETIONS = 200
WATCH_DEBOUNCE_MS = 100
"""How long the watcher waits for more changes before republishing (milliseconds)."""
WATCH_STOP_TIMEOUT_S = 2.0
"""How long ``shutdown`` waits for the watchers to stop (seconds)."""
MEMORY_NAMES = frozenset({"CLAUDE.md", "CLAUDE.local.md", "AGENTS.md"})

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
}


class MemoryDoor:
    """See the module docstring. Event-loop only."""

    def __init__(
        self,
        *,
        server: AgentLanguageServer,
        approvals: ImportApprovals,
        managed: Path | None = None,
    ) -> None:
        self.server = server
        self.approvals = approvals
        self.managed = managed or managed_memory_path()
        self.cache = ParseCache()
        self._published: set[str] = set()
        self._stop: asyncio.Event | None = None
        self._watchers: list[asyncio.Task[None]] = []
        self._watching: frozenset[tuple[Path, bool]] = frozenset()
        self._consulted: dict[str, tuple[Path, ...]] = {}
        """Per open memory document: the paths its analysis read or looked for."""

    # ---- watching the disk ---------------------------------------------------------------------

    def watch(self, paths: set[Path]) -> None:
        """Watch the folders of ``paths`` (the files open memory documents consulted: themselves,
        their imports, missing ones included); a folder that does not exist yet is watched
        through its nearest existing parent, recursively. Restarts the watchers only when the
        set of folders changes. Needs the event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        folders: dict[Path, bool] = {}
        for path in paths:
            folder, recursive = path.parent, False
            while not folder.is_dir() and folder != folder.parent:
                folder, recursive = folder.parent, True
            folders[folder] = folders.get(folder, False) or recursive
        wanted = frozenset(folders.items())
        if wanted == self._watching:
            return
        self._watching = wanted
        if self._stop is not None:
            self._stop.set()
        self._stop = stop = asyncio.Event()
        for recursive in (False, True):
            group = sorted(f for f, rec in folders.items() if rec == recursive)
            if group:
                self._watchers.append(asyncio.create_task(self._watch(group, recursive, stop)))
        self._watchers = [t for t in self._watchers if not t.done()]

    async def _watch(self, paths: list[Path], recursive: bool, stop: asyncio.Event) -> None:
        import watchfiles

        def wanted(change: watchfiles.Change, name: str) -> bool:
            return watchfiles.DefaultFilter()(change, name)

        try:
            async for _changes in watchfiles.awatch(
                *paths,
                watch_filter=wanted,
                debounce=WATCH_DEBOUNCE_MS,
                step=20,
                stop_event=stop,
                recursive=recursive,
                ignore_permission_denied=True,
            ):
                self.refresh_open()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("watching memory files failed; changes on disk show after an edit")

    async def shutdown(self) -> None:
        """Stop the watchers (bounded by :data:`WATCH_STOP_TIMEOUT_S`)."""
        if self._stop is not None:
            self._stop.set()
        if not self._watchers:
            return
        _done, late = await asyncio.wait(self._watchers, timeout=WATCH_STOP_TIMEOUT_S)
        for task in late:
            task.cancel()
        for task in late:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # ---- what the loader sees ------------------------------------------------------------------

    @property
    def encoding(self) -> PositionEncoding:
        value = str(self.server.workspace.position_encoding or "utf-16")
        return value if value in ("utf-8", "utf-16", "utf-32") else "utf-16"  # type: ignore[return-value]

    def spec(self, path: Path) -> MemorySpec:
        """The memory spec of the workspace folder holding ``path`` (else the first one)."""
        roots = tuple(r.resolve() for r in self.server.workspace_roots()) or (path.parent,)
        cwd = next((r for r in roots if r == path or r in path.parents), roots[0])
        door = self.server.settings_door
        store = door.store_for(cwd)
        layers = [(lay.source, lay.settings.model_extra or {}) for lay in store.loaded.applied()]
        options = memory_options(layers, store.env())
        return MemorySpec(
            cwd=cwd,
            roots=roots,
            home=store.loader.home,
            managed=self.managed,
            trusted=store.trusted,
            excludes=options.excludes,
            instruction_files=options.instruction_files,
            external_imports=self.approvals.get(cwd),
        )

    def _overlay(self, path: Path) -> str | None:
        snapshot = self.server.host.buffer(path)
        return snapshot.text if snapshot is not None else None

    def is_memory(self, path: Path, spec: MemorySpec | None = None) -> bool:
        """Whether ``path`` is a memory file (by name, place, or as a loaded import)."""
        parts = path.parts
        if path.name in MEMORY_NAMES or (path.name == "MEMORY.md" and ".claude" in parts):
            return True
        if path.suffix == ".md" and any(
            parts[i] == ".claude" and parts[i + 1] == "rules" for i in range(len(parts) - 2)
        ):
            return True
        if path.suffix != ".md":
            return False
        spec = spec or self.spec(path)
        loaded = load_memory(spec, overlay=self._overlay, cache=self.cache)
        return path in loaded.paths()

    def analysis(self, path: Path) -> tuple[MemorySpec, LoadedMemory]:
        spec = self.spec(path)
        return spec, analyze_file(spec, path, overlay=self._overlay, cache=self.cache)

    # ---- diagnostics ---------------------------------------------------------------------------

    def refresh(self, uri: str) -> None:
        """Publish the memory diagnostics of an open document (after open, change, save)."""
        path = _path(uri)
        if path is None:
            return
        try:
            spec = self.spec(path)
            if not self.is_memory(path, spec):
                if uri in self._published:
                    self._publish(uri, [])
                return
            loaded = analyze_file(spec, path, overlay=self._overlay, cache=self.cache)
            self._consulted[uri] = (path, *loaded.consulted)
            self.watch({p for paths in self._consulted.values() for p in paths})
            lines = self._lines(uri)
            diagnostics = [self._diagnostic(n, lines) for n in loaded.notices if n.path == path]
        except Exception:
            logger.exception("memory diagnostics of %s failed", uri)
            return
        self._publish(uri, diagnostics)

    def closed(self, uri: str) -> None:
        """Clear what was published for a closed document."""
        self._consulted.pop(uri, None)
        if uri in self._published:
            self._publish(uri, [])

    def refresh_open(self) -> None:
        """Publish again for every open document (after trust or settings change)."""
        for doc in list(self.server.workspace.text_documents.values()):
            self.refresh(doc.uri)

    def _publish(self, uri: str, diagnostics: list[types.Diagnostic]) -> None:
        if diagnostics:
            self._published.add(uri)
        else:
            self._published.discard(uri)
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        )

    def _diagnostic(self, notice: MemoryNotice, lines: list[str]) -> types.Diagnostic:
        span = notice.span or Span(line=0, start=0, end=len(lines[0]) if lines else 0)
        return types.Diagnostic(
            range=self._range(span, lines),
            severity=_SEVERITY[notice.severity],
            source=SOURCE,
            code=notice.code,
            message=notice.message,
        )

    # ---- links, hover, completion, code lens ---------------------------------------------------

    def document_links(self, params: types.DocumentLinkParams) -> list[types.DocumentLink]:
        path = _path(params.text_document.uri)
        if path is None or not self.is_memory(path):
            return []
        _spec, loaded = self.analysis(path)
        lines = self._lines(params.text_document.uri)
        caps = self.server.client_capabilities.text_document
        tooltips = bool(caps and caps.document_link and caps.document_link.tooltip_support)
        return [
            types.DocumentLink(
                range=self._range(ref.span, lines),
                target=ref.resolved.as_uri(),
                tooltip=f"{ref.resolved} ({ref.status})" if tooltips else None,
            )
            for ref in loaded.imports
            if ref.source == path and ref.resolved is not None and ref.status != "missing"
        ]

    def hover(self, params: types.HoverParams) -> types.Hover | None:
        path = _path(params.text_document.uri)
        if path is None or not self.is_memory(path):
            return None
        _spec, loaded = self.analysis(path)
        lines = self._lines(params.text_document.uri)
        for ref in loaded.imports:
            if ref.source != path or ref.span.line != params.position.line:
                continue
            rng = self._range(ref.span, lines)
            if rng.start.character <= params.position.character <= rng.end.character:
                return types.Hover(
                    contents=types.MarkupContent(
                        kind=types.MarkupKind.Markdown, value=self._import_text(ref)
                    ),
                    range=rng,
                )
        return None

    def _import_text(self, ref: ImportRef) -> str:
        if ref.resolved is None:
            return f"`@{ref.target}`: cannot be resolved"
        head = f"`{ref.resolved}`"
        text = self._overlay(ref.resolved)
        if text is None:
            try:
                text = ref.resolved.read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = None
        size = (
            f"{len(text):,} characters, about {estimate_text(text):,} tokens"
            if text is not None
            else "not readable"
        )
        state = {
            "ok": "loaded",
            "duplicate": "already loaded elsewhere (not repeated)",
        }.get(ref.status, f"not loaded: {ref.status.replace('-', ' ')}")
        return f"{head}\n\n{size}; {state}"

    def completion(self, params: types.CompletionParams) -> types.CompletionList | None:
        path = _path(params.text_document.uri)
        if path is None or not self.is_memory(path):
            return None
        lines = self._lines(params.text_document.uri)
        if params.position.line >= len(lines):
            return None
        line = lines[params.position.line]
        column = to_code_points(line, params.position.character, self.encoding)
        before = line[:column]
        at = before.rfind("@")
        if (
            at < 0
            or (at > 0 and not before[at - 1].isspace())
            or any(c.isspace() for c in before[at + 1 :])
        ):
            return None
        typed = before[at + 1 :]
        folder_part, _, _name = typed.rpartition("/")
        base = _expand(folder_part, path.parent, self.spec(path).home)
        items: list[types.CompletionItem] = []
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return types.CompletionList(is_incomplete=False, items=[])
        start = types.Position(
            line=params.position.line,
            character=from_code_points(
                line, at + 1 + len(folder_part) + (1 if folder_part else 0), self.encoding
            ),
        )
        for entry in entries[:MAX_COMPLETIONS]:
            is_dir = entry.is_dir()
            label = entry.name + ("/" if is_dir else "")
            kind = types.CompletionItemKind.Folder if is_dir else types.CompletionItemKind.File
            items.append(
                types.CompletionItem(
                    label=label,
                    kind=kind,
                    text_edit=types.TextEdit(
                        range=types.Range(start=start, end=params.position), new_text=label
                    ),
                )
            )
        return types.CompletionList(is_incomplete=len(entries) > MAX_COMPLETIONS, items=items)

    def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        path = _path(params.text_document.uri)
        if path is None:
            return []
        spec = self.spec(path)
        if self.is_memory(path, spec):
            return []
        files = applying_to(spec, path, overlay=self._overlay, cache=self.cache)
        rules = [f for f in files if f.kind in ("user-rule", "project-rule")]
        memory = [f for f in files if f.kind not in ("user-rule", "project-rule")]
        title = f"{_count(len(memory), 'memory file')}, {_count(len(rules), 'rule')}"
        if not spec.trusted:
            title += " (workspace not trusted)"
        return [
            types.CodeLens(
                range=types.Range(
                    start=types.Position(line=0, character=0),
                    end=types.Position(line=0, character=0),
                ),
                command=types.Command(
                    title=f"lsp-agent: {title}",
                    command="",
                    arguments=[
                        {"path": str(f.path), "what": describe(f)} for f in (*memory, *rules)
                    ],
                ),
            )
        ]

    # ---- approval of imports outside the workspace ---------------------------------------------

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """ "Load imports from outside the workspace" for a diagnostic that awaits approval."""
        awaiting = [
            d
            for d in params.context.diagnostics
            if d.source == SOURCE and d.code in ("import-needs-approval", "symlink-outside")
        ]
        path = _path(params.text_document.uri)
        if not awaiting or path is None:
            return []
        project = self.spec(path).cwd
        return [
            types.CodeAction(
                title=f"Load memory imports from outside the workspace for {project.name}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=awaiting,
                command=types.Command(
                    title="Approve imports",
                    command=COMMAND_APPROVE_IMPORTS,
                    arguments=[{"project": str(project), "answer": "approved"}],
                ),
            ),
            types.CodeAction(
                title="Never load memory imports from outside this workspace",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=awaiting,
                command=types.Command(
                    title="Decline imports",
                    command=COMMAND_APPROVE_IMPORTS,
                    arguments=[{"project": str(project), "answer": "declined"}],
                ),
            ),
        ]

    def approve(self, arguments: tuple[Any, ...]) -> dict[str, Any]:
        """``lspAgent.memory.approveImports {project, answer}``: remember the user's answer and
        publish again. Raises ``ValueError`` for malformed arguments."""
        arg = arguments[0] if arguments else None
        if not isinstance(arg, dict):
            raise ValueError("expected one argument {project, answer}")
        project, answer = arg.get("project"), arg.get("answer")
        if not isinstance(project, str) or answer not in ("approved", "declined", "ask"):
            raise ValueError("project must be a path and answer one of approved, declined, ask")
        self.approvals.set(Path(project), answer)
        self.refresh_open()
        return {"project": project, "answer": answer}

    # ---- positions -----------------------------------------------------------------------------

    def _lines(self, uri: str) -> list[str]:
        doc = self.server.workspace.text_documents.get(uri)
        if doc is not None:
            return split_lines(doc.source)
        path = _path(uri)
        try:
            return split_lines(path.read_text(encoding="utf-8", errors="replace")) if path else []
        except OSError:
            return []

    def _range(self, span: Span, lines: list[str]) -> types.Range:
        line = lines[span.line] if span.line < len(lines) else ""
        return types.Range(
            start=types.Position(
                line=span.line, character=from_code_points(line, span.start, self.encoding)
            ),
            end=types.Position(
                line=span.line, character=from_code_points(line, span.end, self.encoding)
            ),
        )


def _path(uri: str) -> Path | None:
    fs_path = to_fs_path(uri)
    return Path(fs_path) if fs_path else None


def _expand(folder: str, base: Path, home: Path) -> Path:
    if folder == "~" or folder.startswith("~/"):
        return home / folder[2:]
    if os.path.isabs(folder):
        return Path(folder or "/")
    return base / folder if folder else base


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


__all__ = ["COMMAND_APPROVE_IMPORTS", "MemoryDoor"]
