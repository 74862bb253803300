"""Asking managed language servers about code: definitions, references, hover, symbols,
rename edits and current diagnostics. The client side of the language-server tools.

Every query first gives the server the document's current text (the agent's overlay: the
editor buffer when open, else the disk), converts positions between code points and the
server's negotiated encoding, and returns plain data with 0-based lines and code-point
characters. Every wait is bounded by the server's ``requestTimeoutMs``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsp_agent.diagnostics.config import VerifyConfig
from lsp_agent.diagnostics.managed import ManagedServer, ServerUnavailableError, text_digest
from lsp_agent.diagnostics.positions import from_code_points, split_lines, to_code_points
from lsp_agent.diagnostics.service import DiagnosticsService
from lsp_agent.diagnostics.uris import path_to_uri, uri_to_path
from lsp_agent.diagnostics.verify import FileVerdict, Target
from lsp_agent.protocol.documents import TextSnapshot
from lsp_agent.workspace.textfile import NotTextError, read_text_file

SYMBOL_KINDS = (
    "file", "module", "namespace", "package", "class", "method", "property", "field",
    "constructor", "enum", "interface", "function", "variable", "constant", "string", "number",
    "boolean", "array", "object", "key", "null", "enum member", "struct", "event", "operator",
    "type parameter",
)  # fmt: skip
"""LSP ``SymbolKind`` names, index = value - 1."""


class QueryError(Exception):
    """A query cannot be answered; the message is written for the model."""


@dataclass(frozen=True, kw_only=True)
class Place:
    """A range in a file: 0-based lines, code-point characters."""

    path: Path
    line: int
    character: int
    end_line: int
    end_character: int


@dataclass(frozen=True, kw_only=True)
class Symbol:
    """A symbol: ``kind`` is a name from :data:`SYMBOL_KINDS`; ``children`` for document
    symbols that nest; ``container`` names the enclosing symbol when the server says."""

    name: str
    kind: str
    place: Place
    detail: str | None = None
    container: str | None = None
    children: tuple[Symbol, ...] = ()


@dataclass(frozen=True, kw_only=True)
class TextEditPlan:
    """Edits for one file from a ``WorkspaceEdit``: ``(start, end, new_text)`` as code-point
    offsets into ``text``, the text the server computed them against."""

    path: Path
    text: str
    edits: tuple[tuple[int, int, str], ...]

    def apply(self) -> str:
        """``text`` with the edits applied. Raises :class:`QueryError` for overlapping edits."""
        result = self.text
        previous_start: int | None = None
        for start, end, new in sorted(self.edits, key=lambda e: (e[0], e[1]), reverse=True):
            if previous_start is not None and end > previous_start:
                raise QueryError(f"the language server sent overlapping edits for {self.path}")
            result = result[:start] + new + result[end:]
            previous_start = start
        return result


TextSource = Callable[[Path], TextSnapshot]
"""Returns the current text of a file (editor buffer or disk, as ``Workspace.read``); raises
``OSError`` or ``NotTextError`` if unreadable."""


class LanguageQueries:
    """Queries against the managed servers of ``service``; ``read`` gives current texts."""

    def __init__(self, *, service: DiagnosticsService, read: TextSource) -> None:
        self.service = service
        self.read = read

    # ---- server choice -------------------------------------------------------------------------

    async def _server_for(self, path: Path | None, capability: str) -> ManagedServer:
        candidates = self.service.servers_for(path) if path is not None else self.service.servers
        if not candidates:
            where = f"for {path.name}" if path is not None else "at all"
            raise QueryError(f"No language server is configured {where}.")
        problems = []
        for server in candidates:
            try:
                await server.ensure_running(timeout=server.config.start_timeout_ms / 1000)
            except ServerUnavailableError as exc:
                problems.append(f"{server.name} {exc}")
                continue
            if server.capabilities.get(capability):
                return server
            problems.append(f"{server.name} does not offer {capability.removesuffix('Provider')}")
        raise QueryError("No language server can answer: " + "; ".join(problems) + ".")

    def _text(self, path: Path) -> str:
        return self._snapshot(path).text

    def _snapshot(self, path: Path) -> TextSnapshot:
        try:
            return self.read(path)
        except FileNotFoundError:
            raise QueryError(f"File does not exist: {path}.") from None
        except (OSError, NotTextError) as exc:
            raise QueryError(f"Cannot read {path}: {exc}.") from None

    async def _request(self, server: ManagedServer, method: str, params: Any) -> Any:
        try:
            return await server.request(
                method, params, timeout=server.config.request_timeout_ms / 1000
            )
        except TimeoutError:
            raise QueryError(
                f"{server.name} did not answer {method} within "
                f"{server.config.request_timeout_ms} ms."
            ) from None
        except ServerUnavailableError as exc:
            raise QueryError(f"{server.name} {exc}.") from None
        except Exception as exc:
            raise QueryError(f"{server.name} answered {method} with an error: {exc}.") from None

    def _position(
        self, server: ManagedServer, text: str, line: int, character: int
    ) -> dict[str, int]:
        lines = split_lines(text)
        if not 0 <= line < len(lines):
            count = f"{len(lines)} line{'' if len(lines) == 1 else 's'}"
            raise QueryError(f"Line {line + 1} is out of range: the file has {count}.")
        return {
            "line": line,
            "character": from_code_points(lines[line], character, server.encoding),
        }

    async def _prepare(
        self, path: Path, capability: str
    ) -> tuple[ManagedServer, str, dict[str, Any]]:
        text = self._text(path)
        server = await self._server_for(path, capability)
        try:
            server.sync(path, text)
        except ServerUnavailableError as exc:
            raise QueryError(f"{server.name} {exc}.") from None
        await self._analyzed(server, path, text)
        return server, text, {"uri": path_to_uri(path)}

    async def _analyzed(self, server: ManagedServer, path: Path, text: str) -> None:
        """Wait (bounded by ``requestTimeoutMs``) until a push server has reported on
        ``text``: some servers (pyright) answer queries with nothing until they have analysed
        the document. Pull servers answer in order and need no wait."""
        if server.pull:
            return
        digest = text_digest(text)
        store = self.service.store
        with contextlib.suppress(TimeoutError), store.watch([path]) as event:
            async with asyncio.timeout(server.config.request_timeout_ms / 1000):
                while store.find(path, server.name, digest=digest) is None:
                    event.clear()
                    await event.wait()

    # ---- results -------------------------------------------------------------------------------

    def _lines_of(self, server: ManagedServer, path: Path) -> list[str] | None:
        text = server.document_text(path)
        if text is None:
            with contextlib.suppress(Exception):
                text = self.read(path).text
        return split_lines(text) if text is not None else None

    def _place(self, server: ManagedServer, uri: Any, rng: Any) -> Place | None:
        path = uri_to_path(uri) if isinstance(uri, str) else None
        if path is None or not isinstance(rng, Mapping):
            return None
        start, end = rng.get("start"), rng.get("end")
        if not isinstance(start, Mapping) or not isinstance(end, Mapping):
            return None
        lines = self._lines_of(server, path)

        def convert(pos: Mapping[str, Any]) -> tuple[int, int]:
            line, units = int(pos.get("line", 0)), int(pos.get("character", 0))
            if lines is None or not 0 <= line < len(lines):
                return line, units
            return line, to_code_points(lines[line], units, server.encoding)

        (line, character), (end_line, end_character) = convert(start), convert(end)
        return Place(
            path=path,
            line=line,
            character=character,
            end_line=end_line,
            end_character=end_character,
        )

    def _places(self, server: ManagedServer, result: Any) -> list[Place]:
        items = result if isinstance(result, list) else [result] if result else []
        places: list[Place] = []
        for item in items:
            if not isinstance(item, Mapping):
                continue
            if "targetUri" in item:  # LocationLink
                place = self._place(
                    server,
                    item["targetUri"],
                    item.get("targetSelectionRange") or item.get("targetRange"),
                )
            else:
                place = self._place(server, item.get("uri"), item.get("range"))
            if place is not None:
                places.append(place)
        return places

    # ---- queries -------------------------------------------------------------------------------

    async def definition(self, path: Path, line: int, character: int) -> list[Place]:
        """Where the symbol at ``line``/``character`` (0-based, code points) is defined."""
        server, text, doc = await self._prepare(path, "definitionProvider")
        result = await self._request(
            server,
            "textDocument/definition",
            {"textDocument": doc, "position": self._position(server, text, line, character)},
        )
        return self._places(server, result)

    async def references(
        self, path: Path, line: int, character: int, *, include_declaration: bool = True
    ) -> list[Place]:
        """Every reference to the symbol at the position."""
        server, text, doc = await self._prepare(path, "referencesProvider")
        result = await self._request(
            server,
            "textDocument/references",
            {
                "textDocument": doc,
                "position": self._position(server, text, line, character),
                "context": {"includeDeclaration": include_declaration},
            },
        )
        return self._places(server, result)

    async def hover(self, path: Path, line: int, character: int) -> str | None:
        """The hover text at the position (Markdown or plain text), or ``None``."""
        server, text, doc = await self._prepare(path, "hoverProvider")
        result = await self._request(
            server,
            "textDocument/hover",
            {"textDocument": doc, "position": self._position(server, text, line, character)},
        )
        if not isinstance(result, Mapping):
            return None
        return _markup(result.get("contents")) or None

    async def document_symbols(self, path: Path) -> list[Symbol]:
        """The symbols of ``path``, nested when the server nests them."""
        server, _text, doc = await self._prepare(path, "documentSymbolProvider")
        result = await self._request(server, "textDocument/documentSymbol", {"textDocument": doc})
        return self._symbols(server, result, path)

    async def workspace_symbols(self, query: str, *, near: Path | None = None) -> list[Symbol]:
        """Symbols matching ``query`` across the workspace (``near`` picks the server)."""
        server = await self._server_for(near, "workspaceSymbolProvider")
        result = await self._request(server, "workspace/symbol", {"query": query})
        return self._symbols(server, result, None)

    def _symbols(self, server: ManagedServer, result: Any, path: Path | None) -> list[Symbol]:
        symbols: list[Symbol] = []
        for item in result if isinstance(result, list) else []:
            symbol = self._symbol(server, item, path)
            if symbol is not None:
                symbols.append(symbol)
        return symbols

    def _symbol(self, server: ManagedServer, item: Any, path: Path | None) -> Symbol | None:
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            return None
        kind_value = item.get("kind")
        kind = (
            SYMBOL_KINDS[kind_value - 1]
            if isinstance(kind_value, int) and 1 <= kind_value <= len(SYMBOL_KINDS)
            else "symbol"
        )
        location = item.get("location")
        if isinstance(location, Mapping):  # SymbolInformation / WorkspaceSymbol
            place = self._place(server, location.get("uri"), location.get("range") or _ZERO_RANGE)
        elif path is not None:  # DocumentSymbol
            place = self._place(
                server, path_to_uri(path), item.get("selectionRange") or item.get("range")
            )
        else:
            place = None
        if place is None:
            return None
        children = tuple(
            child
            for child in (self._symbol(server, c, path) for c in item.get("children") or ())
            if child is not None
        )
        detail = item.get("detail")
        container = item.get("containerName")
        return Symbol(
            name=item["name"],
            kind=kind,
            place=place,
            detail=detail if isinstance(detail, str) and detail else None,
            container=container if isinstance(container, str) and container else None,
            children=children,
        )

    async def rename(
        self, path: Path, line: int, character: int, new_name: str
    ) -> list[TextEditPlan]:
        """The edits a rename of the symbol at the position to ``new_name`` needs, one plan per
        file, computed by the language server. Raises :class:`QueryError` when the server
        refuses, proposes file operations, or computed edits against a text that is not the
        file's current text (unsaved changes it has not seen)."""
        server, text, doc = await self._prepare(path, "renameProvider")
        result = await self._request(
            server,
            "textDocument/rename",
            {
                "textDocument": doc,
                "position": self._position(server, text, line, character),
                "newName": new_name,
            },
        )
        if not isinstance(result, Mapping):
            raise QueryError(f"{server.name} found nothing to rename at that position.")
        per_uri: dict[str, list[Any]] = {}
        changes = result.get("changes")
        if isinstance(changes, Mapping):
            for uri, edits in changes.items():
                per_uri.setdefault(uri, []).extend(edits if isinstance(edits, list) else [])
        for change in result.get("documentChanges") or ():
            if not isinstance(change, Mapping) or "kind" in change:
                raise QueryError(
                    f"{server.name} wants to create, rename or delete files for this rename; "
                    "only edits inside files are supported. Rename the file yourself if needed."
                )
            identifier = change.get("textDocument") or {}
            uri = identifier.get("uri")
            version = identifier.get("version")
            target = uri_to_path(uri) if isinstance(uri, str) else None
            if target is not None and isinstance(version, int):
                synced = server._docs.get(target)
                if synced is None or synced.current.version != version:
                    raise QueryError(
                        f"{server.name} computed the rename for an outdated version of "
                        f"{target}; try again."
                    )
            per_uri.setdefault(str(uri), []).extend(change.get("edits") or ())
        plans = [self._plan(server, uri, edits) for uri, edits in per_uri.items() if edits]
        if not plans:
            raise QueryError(f"{server.name} proposed no edits for this rename.")
        return plans

    def _plan(self, server: ManagedServer, uri: str, edits: Sequence[Any]) -> TextEditPlan:
        target = uri_to_path(uri)
        if target is None:
            raise QueryError(f"the rename touches {uri}, which is not a local file")
        basis = server.document_text(target)
        current = self._text(target)
        if basis is None:
            try:
                basis = read_text_file(target).text
            except (OSError, NotTextError) as exc:
                raise QueryError(f"Cannot read {target}: {exc}.") from None
        if basis != current:
            raise QueryError(
                f"{target} has unsaved changes that {server.name} has not seen; save it and "
                "try the rename again."
            )
        lines = split_lines(basis)
        starts = _line_starts(basis)
        converted: list[tuple[int, int, str]] = []
        for edit in edits:
            if not isinstance(edit, Mapping) or not isinstance(edit.get("newText"), str):
                raise QueryError(f"{server.name} sent a malformed edit for {target}")
            rng = edit.get("range") or {}
            start = _offset(lines, starts, rng.get("start"), server)
            end = _offset(lines, starts, rng.get("end"), server)
            converted.append((start, max(start, end), edit["newText"]))
        return TextEditPlan(path=target, text=basis, edits=tuple(converted))

    async def current_diagnostics(self, path: Path, *, config: VerifyConfig) -> FileVerdict:
        """Diagnostics of the current text of ``path`` from every expected source, waited
        for with the verification settle rule (``config.timeout_ms`` cap). There is no earlier
        text to compare with: every current diagnostic is in ``new``."""
        snapshot = self._snapshot(path)
        target = Target(
            path=path,
            text=snapshot.text,
            digest=snapshot.digest,
            version=snapshot.version if snapshot.source == "buffer" else None,
            since=self.service.clock(),
            base_text=None,
            base_digest=None,
            base_version=None,
        )
        verdict = await self.service.verifier.verify([target], config=config, baselines={})
        return verdict.files[0]


_ZERO_RANGE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}


def _line_starts(text: str) -> list[int]:
    starts = [0]
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char in "\r\n":
            if char == "\r" and index + 1 < length and text[index + 1] == "\n":
                index += 1
            starts.append(index + 1)
        index += 1
    return starts


def _offset(lines: list[str], starts: list[int], pos: Any, server: ManagedServer) -> int:
    if not isinstance(pos, Mapping):
        raise QueryError(f"{server.name} sent an edit without a valid range")
    line, units = int(pos.get("line", 0)), int(pos.get("character", 0))
    if line >= len(lines):
        return starts[-1] + len(lines[-1])
    return starts[line] + to_code_points(lines[line], units, server.encoding)


def _markup(contents: Any) -> str:
    if isinstance(contents, str):
        return contents.strip()
    if isinstance(contents, Mapping):
        value = contents.get("value")
        if not isinstance(value, str):
            return ""
        language = contents.get("language")
        return f"```{language}\n{value}\n```" if isinstance(language, str) else value.strip()
    if isinstance(contents, list):
        return "\n\n".join(part for part in (_markup(c) for c in contents) if part)
    return ""
