"""Language-server tools: ``LSP`` (read-only queries) and ``Rename`` (an exact rename).

Both are backed by the managed language servers of the session's diagnostics service (see
docs/verification.md); a session whose host has none gets a clear error. Positions are
1-based lines and 1-based characters counted in code points (as ``Read`` shows them), or a
``symbol`` named on the line. ``Rename`` asks the language server for the ``WorkspaceEdit``
and applies it through the change-set pipeline, so it goes through the permission prompt
(with the diff of every file) and is verified against diagnostics like any edit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from lsp_agent.diagnostics.config import VerifyConfig
from lsp_agent.diagnostics.model import Diagnostic
from lsp_agent.diagnostics.positions import split_lines
from lsp_agent.diagnostics.queries import LanguageQueries, Place, QueryError, Symbol
from lsp_agent.protocol.documents import FileChange
from lsp_agent.protocol.events import Location, ToolKind
from lsp_agent.tools._files import model_safe, read_snapshot
from lsp_agent.tools._paths import display_path, resolve_file_path
from lsp_agent.tools._schema import tidy_schema
from lsp_agent.tools.base import Prepared, Tool, ToolContext, ToolError, ToolInput, ToolOutput
from lsp_agent.tools.diffing import diff_item

MAX_PLACES = 100
"""Locations listed at most by one call (the rest are counted)."""

MAX_HOVER_CHARS = 4000
MAX_SYMBOLS = 300

Operation = Literal[
    "diagnostics", "goToDefinition", "findReferences", "hover", "documentSymbol", "workspaceSymbol"
]

LSP_DESCRIPTION = """\
Asks the project's language servers (the same ones that check your edits) about code. \
Operations:
- diagnostics: current errors and warnings of file_path, computed for its current text.
- goToDefinition: where the symbol at file_path/line/character (or `symbol` on that line) is \
defined.
- findReferences: every reference to that symbol, across the workspace.
- hover: type and documentation of that symbol.
- documentSymbol: the outline (classes, functions, ...) of file_path.
- workspaceSymbol: symbols whose name matches `query`, across the workspace.
Lines and characters are 1-based, as Read shows them. Instead of character you may give \
`symbol`, the exact name as it appears on that line. Prefer this over Grep to find definitions \
and usages: it understands scopes and imports."""

RENAME_DESCRIPTION = """\
Renames a symbol (variable, function, class, method, ...) everywhere it is used, as computed \
by the project's language server: exact, unlike search-and-replace. Give file_path and line of \
one occurrence, and either character (1-based) or `symbol` (its name on that line), plus \
new_name. All affected files are changed in one step, after the user's approval."""


class LspInput(ToolInput):
    """Input of ``LSP``."""

    model_config = ConfigDict(json_schema_extra=tidy_schema)

    operation: Operation = Field(description="What to ask")
    file_path: str | None = Field(
        default=None, description="Absolute path of the file (all operations but workspaceSymbol)"
    )
    line: int | None = Field(default=None, ge=1, description="1-based line of the symbol")
    character: int | None = Field(
        default=None, ge=1, description="1-based character of the symbol on that line"
    )
    symbol: str | None = Field(
        default=None,
        min_length=1,
        description="The symbol's name on that line (instead of character)",
    )
    query: str | None = Field(default=None, description="Name to search (workspaceSymbol)")


class RenameInput(ToolInput):
    """Input of ``Rename``."""

    model_config = ConfigDict(json_schema_extra=tidy_schema)

    file_path: str = Field(description="Absolute path of a file where the symbol occurs")
    line: int = Field(ge=1, description="1-based line of an occurrence")
    character: int | None = Field(
        default=None, ge=1, description="1-based character of the occurrence"
    )
    symbol: str | None = Field(
        default=None, min_length=1, description="The symbol's current name on that line"
    )
    new_name: str = Field(min_length=1, description="The new name")


def _queries(ctx: ToolContext) -> LanguageQueries:
    service = ctx.diagnostics
    if service is None or not service.servers:
        raise ToolError(
            "No language servers are configured for this session (settings: "
            "diagnostics.servers), so this tool cannot answer. Use Grep and Read instead."
        )
    return LanguageQueries(service=service, read=ctx.workspace.read)


def _position(
    ctx: ToolContext, path: Path, line: int, character: int | None, symbol: str | None
) -> tuple[int, int]:
    """0-based line and code-point character from the tool's 1-based input."""
    text = read_snapshot(ctx, path).text
    lines = split_lines(text)
    if line > len(lines):
        count = f"{len(lines)} line{'' if len(lines) == 1 else 's'}"
        raise ToolError(f"line {line} is past the end of {path} ({count}).")
    source = lines[line - 1]
    if symbol is not None:
        column = source.find(symbol)
        if column < 0:
            raise ToolError(
                f"`{symbol}` does not occur on line {line} of {path}: {source.strip()!r}"
            )
        if character is not None and source.find(symbol, character - 1) >= 0:
            column = source.find(symbol, character - 1)
        return line - 1, column
    if character is None:
        raise ToolError("Give `character` (1-based) or `symbol` to say which symbol on the line.")
    return line - 1, character - 1


class _Lines:
    """Code lines of files named in results, read once per call."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.cache: dict[Path, list[str] | None] = {}

    def get(self, path: Path, line: int) -> str:
        if path not in self.cache:
            try:
                self.cache[path] = split_lines(self.ctx.workspace.read(path).text)
            except Exception:
                self.cache[path] = None
        lines = self.cache[path]
        if lines is None or not 0 <= line < len(lines):
            return ""
        return model_safe(lines[line].strip())[:200]


def _place_text(place: Place, cwd: Path, lines: _Lines) -> str:
    code = lines.get(place.path, place.line)
    where = f"{display_path(place.path, cwd)}:{place.line + 1}:{place.character + 1}"
    return f"{where}: {code}" if code else where


def _places_text(title: str, places: list[Place], cwd: Path, lines: _Lines) -> str:
    if not places:
        return f"{title}: none found."
    shown = [f"  {_place_text(p, cwd, lines)}" for p in places[:MAX_PLACES]]
    more = len(places) - MAX_PLACES
    tail = [f"  (and {more} more)"] if more > 0 else []
    return "\n".join([f"{title} ({len(places)}):", *shown, *tail])


def _symbols_text(symbols: list[Symbol], cwd: Path, *, show_path: bool) -> str:
    out: list[str] = []

    def walk(items: tuple[Symbol, ...] | list[Symbol], depth: int) -> None:
        for symbol in items:
            if len(out) >= MAX_SYMBOLS:
                return
            where = (
                f"{display_path(symbol.place.path, cwd)}:{symbol.place.line + 1}"
                if show_path
                else f"line {symbol.place.line + 1}"
            )
            extra = f" — {symbol.detail}" if symbol.detail else ""
            inside = f" (in {symbol.container})" if symbol.container else ""
            out.append(f"{'  ' * depth}{symbol.kind} {symbol.name}{inside} [{where}]{extra}")
            walk(symbol.children, depth + 1)

    walk(symbols, 0)
    return "\n".join(out) if out else "No symbols found."


def _diagnostics_text(diagnostics: tuple[Diagnostic, ...], name: str) -> list[str]:
    out = []
    for d in diagnostics:
        label = f"{d.source} {d.code}" if d.code else d.source
        message = d.message.strip().splitlines()[0] if d.message.strip() else ""
        where = f"{name}:{d.line + 1}:{d.range.start.character + 1}"
        out.append(f"  {d.severity_name} {where} [{label}] {message}")
    return out


class LspTool(Tool[LspInput]):
    """Read-only language-server queries (see the module docstring)."""

    name: ClassVar[str] = "LSP"
    description: ClassVar[str] = LSP_DESCRIPTION
    input_model: ClassVar[type[ToolInput]] = LspInput
    kind: ClassVar[ToolKind] = "search"
    read_only: ClassVar[bool] = True
    concurrency_safe: ClassVar[bool] = True
    reads_disk: ClassVar[bool] = True
    writes_disk: ClassVar[bool] = False

    def title(self, inp: LspInput) -> str:
        """``LSP <operation> <file>``."""
        target = inp.file_path or inp.query or ""
        return f"LSP {inp.operation} {target}".rstrip()

    async def prepare(self, inp: LspInput, ctx: ToolContext) -> Prepared:
        """Check the input shape; the paths go to the permission engine."""
        if inp.operation == "workspaceSymbol":
            if not inp.query:
                raise ToolError("workspaceSymbol needs `query`.")
            path = resolve_file_path(inp.file_path) if inp.file_path else None
        else:
            if not inp.file_path:
                raise ToolError(f"{inp.operation} needs `file_path`.")
            path = resolve_file_path(inp.file_path)
            if inp.operation not in ("diagnostics", "documentSymbol") and inp.line is None:
                raise ToolError(f"{inp.operation} needs `line` and `character` or `symbol`.")
        locations = (Location(path=str(path), line=inp.line),) if path is not None else ()
        return Prepared(
            title=self.title(inp),
            paths=(path,) if path is not None else (),
            locations=locations,
        )

    async def call(self, inp: LspInput, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        """Run the query; :class:`ToolError` when no server can answer."""
        queries = _queries(ctx)
        lines = _Lines(ctx)
        try:
            return await self._run(inp, ctx, queries, lines)
        except QueryError as exc:
            raise ToolError(str(exc)) from None

    async def _run(
        self, inp: LspInput, ctx: ToolContext, queries: LanguageQueries, lines: _Lines
    ) -> ToolOutput:
        if inp.operation == "workspaceSymbol":
            near = resolve_file_path(inp.file_path) if inp.file_path else None
            symbols = await queries.workspace_symbols(inp.query or "", near=near)
            return ToolOutput(
                text=_symbols_text(symbols, ctx.cwd, show_path=True),
                raw_output={"count": len(symbols)},
            )
        assert inp.file_path is not None
        path = resolve_file_path(inp.file_path)
        name = display_path(path, ctx.cwd)
        if inp.operation == "diagnostics":
            verdict = await queries.current_diagnostics(path, config=_all_severities(ctx))
            if not verdict.sources:
                raise ToolError(f"No language server checks {name}.")
            checked = ", ".join(s.channel for s in verdict.checked) or "none"
            out = [f"Diagnostics of {name} (current text; checked by {checked}):"]
            out += _diagnostics_text(verdict.new, name) or ["  none"]
            out += [f"  unknown: {s.channel} {s.reason}" for s in verdict.unknown]
            return ToolOutput(text="\n".join(out), raw_output={"count": len(verdict.new)})
        if inp.operation == "documentSymbol":
            symbols = await queries.document_symbols(path)
            return ToolOutput(
                text=f"Symbols of {name}:\n" + _symbols_text(symbols, ctx.cwd, show_path=False),
                raw_output={"count": len(symbols)},
            )
        assert inp.line is not None
        line, character = _position(ctx, path, inp.line, inp.character, inp.symbol)
        if inp.operation == "hover":
            text = await queries.hover(path, line, character)
            if not text:
                return ToolOutput(text="No hover information at that position.")
            return ToolOutput(text=model_safe(text[:MAX_HOVER_CHARS]))
        if inp.operation == "goToDefinition":
            places = await queries.definition(path, line, character)
            return ToolOutput(
                text=_places_text("Definition", places, ctx.cwd, lines),
                raw_output={"count": len(places)},
            )
        places = await queries.references(path, line, character)
        return ToolOutput(
            text=_places_text("References", places, ctx.cwd, lines),
            raw_output={"count": len(places)},
        )


def _all_severities(ctx: ToolContext) -> VerifyConfig:
    service = ctx.diagnostics
    base = service.settings.verify if service is not None else VerifyConfig()
    return base.model_copy(update={"min_severity": "information"})


class RenameTool(Tool[RenameInput]):
    """An exact rename computed by the language server (see the module docstring)."""

    name: ClassVar[str] = "Rename"
    description: ClassVar[str] = RENAME_DESCRIPTION
    input_model: ClassVar[type[ToolInput]] = RenameInput
    kind: ClassVar[ToolKind] = "edit"
    reads_disk: ClassVar[bool] = True
    writes_disk: ClassVar[bool] = False

    def title(self, inp: RenameInput) -> str:
        """``Rename <symbol> → <new>``."""
        return f"Rename {inp.symbol or 'symbol'} → {inp.new_name}"

    def target_paths(self, inp: RenameInput, ctx: ToolContext) -> tuple[Path, ...] | None:
        """The file named in the input (the other files the rename changes are known only
        after ``prepare`` and are judged then)."""
        try:
            return (resolve_file_path(inp.file_path),)
        except ToolError:
            return None

    async def prepare(self, inp: RenameInput, ctx: ToolContext) -> Prepared:
        """Ask the language server for the edits and turn them into file changes with diffs
        (shown in the permission prompt)."""
        path = resolve_file_path(inp.file_path)
        line, character = _position(ctx, path, inp.line, inp.character, inp.symbol)
        queries = _queries(ctx)
        try:
            plans = await queries.rename(path, line, character, inp.new_name)
            changes: list[FileChange] = []
            for plan in plans:
                base = read_snapshot(ctx, plan.path)
                if base.text != plan.text:
                    raise ToolError(
                        f"{plan.path} changed while the rename was computed; try again."
                    )
                changes.append(FileChange(path=plan.path, base=base, new_text=plan.apply()))
        except QueryError as exc:
            raise ToolError(str(exc)) from None
        changed = [c for c in changes if c.base is None or c.new_text != c.base.text]
        if not changed:
            raise ToolError("The rename changes nothing.")
        return Prepared(
            title=f"Rename → {inp.new_name} in {len(changed)} file(s)",
            content=tuple(
                diff_item(
                    c.path,
                    c.base.text if c.base is not None else None,
                    c.new_text,
                    label=display_path(c.path, ctx.cwd),
                )
                for c in changed
            ),
            changes=tuple(changed),
            paths=tuple(c.path for c in changed),
            locations=(Location(path=str(path), line=inp.line),),
        )

    async def call(self, inp: RenameInput, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        """Apply all changes in one batch; :class:`ToolError` if the door refused them."""
        result = await ctx.workspace.apply(prepared.changes, label=prepared.title)
        if not result.applied:
            raise ToolError(f"The rename was not applied: {result.failure or 'unknown reason'}")
        for snapshot in result.snapshots:
            # Files the model had read stay editable without another Read.
            if snapshot.path in ctx.read_state.digests:
                ctx.read_state.digests[snapshot.path] = snapshot.digest
        names = [display_path(c.path, ctx.cwd) for c in prepared.changes]
        return ToolOutput(
            text=f"Renamed to `{inp.new_name}` in {len(names)} file(s): {', '.join(names)}.",
            content=prepared.content,
            raw_output={"files": [str(c.path) for c in prepared.changes]},
        )


def lsp_tools() -> list[Tool[Any, Any]]:
    """The language-server tools, to add to a session's registry when managed servers are
    configured."""
    return [LspTool(), RenameTool()]
