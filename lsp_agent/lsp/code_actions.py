"""Agent code actions: "Fix with agent", "Explain with agent", "Ask agent about selection",
and ready fix suggestions; plus the bridge notification and the commands they run.

``textDocument/codeAction`` offers, for every diagnostic in the range from any source (the
client's ``context.diagnostics`` merged with the store's diagnostics for the buffer's current
text: bridged and managed servers), a ``quickfix`` "Fix with agent"; "Explain with agent"
(``refactor.lspAgent.explain``) when there are diagnostics; "Ask agent about selection"
(``refactor.lspAgent.ask``) for a non-empty selection; and each ready suggestion as a preferred
quick fix (``quickfix.lspAgent.suggestion``) whose versioned edit is included and whose title
says it is AI-generated. Agent actions carry their arguments in ``data``; ``codeAction/resolve``
adds the command (clients that cannot resolve commands get it at once).

Executing a command (``workspace/executeCommand``) starts a session turn in the background and
answers ``{"sessionId"}`` at once; ``lspAgent/session/didStart`` and ``lspAgent/session/didEnd``
tell the client, and the turn's edits go through the normal permission and review path.

The features are registered by :mod:`lsp_agent.lsp.server` with the static capabilities of
:mod:`lsp_agent.lsp.methods` (this module loads the agent core, which ``initialize`` must not
wait for); the server creates :class:`CodeActions` on first use.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pygls.capabilities import get_capability
from pygls.workspace import TextDocument

from lsp_agent.diagnostics.model import SEVERITY_NAMES, Diagnostic
from lsp_agent.diagnostics.positions import from_code_points, split_lines, to_code_points
from lsp_agent.lsp import action_prompts as actions
from lsp_agent.lsp import methods
from lsp_agent.lsp.action_prompts import Problem
from lsp_agent.lsp.errors import invalid_params
from lsp_agent.lsp.progress import TurnProgress
from lsp_agent.lsp.sessions_door import usage_json
from lsp_agent.protocol.prompt import PromptPart
from lsp_agent.sessions.manager import Session

if TYPE_CHECKING:
    from lsp_agent.lsp.server import AgentLanguageServer

logger = logging.getLogger(__name__)

KIND_FIX = methods.KIND_FIX
KIND_EXPLAIN = methods.KIND_EXPLAIN
KIND_ASK = methods.KIND_ASK
KIND_SUGGESTION = methods.KIND_SUGGESTION
KINDS = list(methods.CODE_ACTION_KINDS)
MAX_FIX_ACTIONS = 5
"""At most this many "Fix with agent" actions per request (one per diagnostic)."""


class ProblemArg(BaseModel):
    """A diagnostic in a command's arguments: 0-based lines, code-point characters."""

    model_config = ConfigDict(extra="ignore")

    line: int = Field(ge=0)
    character: int = Field(default=0, ge=0)
    end_line: int = Field(alias="endLine", ge=0)
    message: str
    source: str | None = None
    code: str | None = None
    severity: str = "error"


class ActionArgs(BaseModel):
    """The argument object of the agent commands (also the code action's ``data``)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    action: Literal["fix", "explain", "ask"]
    uri: str
    version: int | None = None
    problems: list[ProblemArg] = Field(default_factory=list)
    start_line: int | None = Field(default=None, alias="startLine", ge=0)
    end_line: int | None = Field(default=None, alias="endLine", ge=0)
    question: str | None = None
    session_id: str | None = Field(default=None, alias="sessionId")


class SuggestionArgs(BaseModel):
    """Arguments of ``lspAgent.applySuggestion`` (sent after the client applied the edit)."""

    model_config = ConfigDict(extra="ignore")

    uri: str
    id: str


_COMMAND_OF = {
    "fix": actions.COMMAND_FIX,
    "explain": actions.COMMAND_EXPLAIN,
    "ask": actions.COMMAND_ASK,
}
_TITLE_OF = {
    "fix": "Fix with agent",
    "explain": "Explain with agent",
    "ask": "Ask agent about selection",
}


def _problem_from_lsp(diagnostic: types.Diagnostic, lines: list[str], encoding: str) -> Problem:
    start, end = diagnostic.range.start, diagnostic.range.end
    line_text = lines[start.line] if start.line < len(lines) else ""
    code = diagnostic.code
    severity = int(diagnostic.severity) if diagnostic.severity is not None else 1
    return Problem(
        line=min(start.line, max(len(lines) - 1, 0)),
        character=to_code_points(line_text, start.character, encoding),  # type: ignore[arg-type]
        end_line=min(max(end.line, start.line), max(len(lines) - 1, 0)),
        message=diagnostic.message,
        source=diagnostic.source,
        code=None if code is None else str(code),
        severity=SEVERITY_NAMES.get(severity, "error"),
    )


def _problem_from_store(diagnostic: Diagnostic) -> Problem:
    return Problem(
        line=diagnostic.range.start.line,
        character=diagnostic.range.start.character,
        end_line=diagnostic.range.end.line,
        message=diagnostic.message,
        source=diagnostic.source,
        code=diagnostic.code,
        severity=diagnostic.severity_name,
    )


def _to_lsp(problem: Problem, lines: list[str], encoding: str) -> types.Diagnostic:
    line_text = lines[problem.line] if problem.line < len(lines) else ""
    character = from_code_points(line_text, problem.character, encoding)  # type: ignore[arg-type]
    severity = {"error": 1, "warning": 2, "information": 3, "hint": 4}.get(problem.severity, 1)
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=problem.line, character=character),
            end=types.Position(line=problem.line, character=character),
        ),
        message=problem.message,
        severity=types.DiagnosticSeverity(severity),
        source=problem.source,
        code=problem.code,
    )


def _wanted(kind: str, only: list[str] | None) -> bool:
    if not only:
        return True
    return any(kind == o or kind.startswith(f"{o}.") for o in only)


def _problem_json(problem: Problem) -> dict[str, Any]:
    return {
        "line": problem.line,
        "character": problem.character,
        "endLine": problem.end_line,
        "message": problem.message,
        "source": problem.source,
        "code": problem.code,
        "severity": problem.severity,
    }


class CodeActions:
    """The handlers; ``server`` is the agent language server."""

    def __init__(self, *, server: AgentLanguageServer) -> None:
        self.server = server
        self._turns: set[asyncio.Task[None]] = set()

    @property
    def encoding(self) -> str:
        return self.server.diagnostics.encoding

    def _doc(self, uri: str) -> tuple[Path, TextDocument] | None:
        path = self.server.diagnostics._path(uri)
        if path is None:
            return None
        doc = self.server.host.documents.find(self.server.workspace, path)
        return (path, doc) if doc is not None else None

    def _resolves_commands(self) -> bool:
        properties = get_capability(
            self.server.client_capabilities,
            "text_document.code_action.resolve_support.properties",
            [],
        )
        return "command" in (properties or [])

    # ---- textDocument/codeAction --------------------------------------------------------------

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """The agent's code actions for ``params`` (see the module docstring)."""
        found = self._doc(params.text_document.uri)
        if found is None:
            return []
        path, doc = found
        lines = split_lines(doc.source)
        first, last = params.range.start.line, params.range.end.line
        problems: list[Problem] = []
        seen: set[tuple[int, int, str]] = set()

        def add(problem: Problem) -> None:
            key = (problem.line, problem.character, problem.message)
            if key not in seen:
                seen.add(key)
                problems.append(problem)

        for given in params.context.diagnostics:
            add(_problem_from_lsp(given, lines, self.encoding))
        stored, _doc = self.server.diagnostics.current_diagnostics(path)
        for known in stored:
            if known.range.start.line <= last and known.range.end.line >= first:
                add(_problem_from_store(known))
        only = [str(kind) for kind in params.context.only or []] or None
        out: list[types.CodeAction] = []
        base = {"uri": params.text_document.uri, "version": doc.version}
        if _wanted(KIND_FIX, only):
            for problem in problems[:MAX_FIX_ACTIONS]:
                out.append(
                    self._action(
                        f"Fix with agent: {problem.message.strip().splitlines()[0][:60]}",
                        KIND_FIX,
                        {**base, "action": "fix", "problems": [_problem_json(problem)]},
                        diagnostics=[_to_lsp(problem, lines, self.encoding)],
                    )
                )
        if problems and _wanted(KIND_EXPLAIN, only):
            out.append(
                self._action(
                    "Explain with agent",
                    KIND_EXPLAIN,
                    {**base, "action": "explain", "problems": [_problem_json(p) for p in problems]},
                )
            )
        selected = params.range.start != params.range.end
        if selected and _wanted(KIND_ASK, only):
            end_line = last - 1 if params.range.end.character == 0 and last > first else last
            out.append(
                self._action(
                    "Ask agent about selection",
                    KIND_ASK,
                    {**base, "action": "ask", "startLine": first, "endLine": end_line},
                )
            )
        if _wanted(KIND_SUGGESTION, only):
            out.extend(self._suggestion_actions(path, doc, first, last))
        return out

    def _action(
        self,
        title: str,
        kind: str,
        data: dict[str, Any],
        *,
        diagnostics: list[types.Diagnostic] | None = None,
    ) -> types.CodeAction:
        action = types.CodeAction(title=title, kind=kind, diagnostics=diagnostics, data=data)
        if not self._resolves_commands():
            action.command = self._command(data)
        return action

    def _command(self, data: dict[str, Any]) -> types.Command:
        kind = str(data.get("action", "fix"))
        return types.Command(
            title=_TITLE_OF.get(kind, "lsp-agent"),
            command=_COMMAND_OF.get(kind, actions.COMMAND_FIX),
            arguments=[data],
        )

    def resolve(self, action: types.CodeAction) -> types.CodeAction:
        """``codeAction/resolve``: add the command that starts the turn."""
        if action.command is None and isinstance(action.data, dict) and "action" in action.data:
            action.command = self._command(action.data)
        return action

    def _suggestion_actions(
        self, path: Path, doc: TextDocument, first: int, last: int
    ) -> list[types.CodeAction]:
        engine = self.server.diagnostics.suggestions
        if engine is None:
            return []
        lines = split_lines(doc.source)
        versioned = bool(
            get_capability(
                self.server.client_capabilities, "workspace.workspace_edit.document_changes", False
            )
        )
        out = []
        for suggestion, start, end in engine.suggestions(path):
            if start > last or end < first:
                continue
            end_position = (
                types.Position(line=end + 1, character=0)
                if end + 1 < len(lines)
                else types.Position(
                    line=end,
                    character=from_code_points(lines[end], len(lines[end]), self.encoding),  # type: ignore[arg-type]
                )
            )
            new_text = suggestion.new + ("\n" if end + 1 < len(lines) else "")
            edit = types.TextEdit(
                range=types.Range(start=types.Position(line=start, character=0), end=end_position),
                new_text=new_text,
            )
            if versioned:
                workspace_edit = types.WorkspaceEdit(
                    document_changes=[
                        types.TextDocumentEdit(
                            text_document=types.OptionalVersionedTextDocumentIdentifier(
                                uri=doc.uri, version=doc.version
                            ),
                            edits=[edit],
                        )
                    ]
                )
            else:
                workspace_edit = types.WorkspaceEdit(changes={doc.uri: [edit]})
            out.append(
                types.CodeAction(
                    title=suggestion.title,
                    kind=KIND_SUGGESTION,
                    is_preferred=True,
                    edit=workspace_edit,
                    command=types.Command(
                        title="Accept AI fix",
                        command=actions.COMMAND_APPLY_SUGGESTION,
                        arguments=[{"uri": doc.uri, "id": suggestion.id}],
                    ),
                )
            )
        return out

    # ---- workspace/executeCommand --------------------------------------------------------------

    async def run_command(self, name: str, arguments: tuple[Any, ...]) -> dict[str, Any]:
        """``workspace/executeCommand`` of ``name`` with the arguments pygls decoded: exactly
        one argument object (pygls' namedtuples become dicts again)."""
        if len(arguments) != 1:
            raise invalid_params(f"{name} takes one argument object, got {len(arguments)}")
        argument = arguments[0]
        if hasattr(argument, "_asdict"):  # pygls' namedtuple for untyped JSON objects
            argument = _plain(argument)
        return await self.execute(name, argument)

    async def execute(self, command: str, raw: Any) -> dict[str, Any]:
        """Run an agent command; answers ``{"sessionId"}`` once the turn has started."""
        if command == actions.COMMAND_APPLY_SUGGESTION:
            return self._suggestion_taken(raw)
        try:
            args = ActionArgs.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "arguments"
            raise invalid_params(f"{command}: {where}: {first['msg']}") from None
        path = self.server.diagnostics._path(args.uri)
        if path is None:
            raise invalid_params(f"{command}: {args.uri} is not a file URI")
        snapshot = self.server.host.buffer(path)
        if snapshot is None:
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise invalid_params(f"{command}: cannot read {path}: {exc}") from None
        else:
            text = snapshot.text
        session = self._session_for(path, args.session_id)
        parts = self._prompt(args, path, text, session.cwd)
        title = _turn_title(args, path)
        self.server.protocol.notify(
            methods.SESSION_DID_START,
            {
                "sessionId": session.id,
                "cwd": str(session.cwd),
                "title": title,
                "origin": command,
                "uri": args.uri,
            },
        )
        task = asyncio.ensure_future(self._run(session, parts))
        self._turns.add(task)
        task.add_done_callback(self._turns.discard)
        return {"sessionId": session.id}

    def _prompt(self, args: ActionArgs, path: Path, text: str, cwd: Path) -> list[PromptPart]:
        problems = [
            Problem(
                line=p.line,
                character=p.character,
                end_line=max(p.end_line, p.line),
                message=p.message,
                source=p.source,
                code=p.code,
                severity=p.severity,
            )
            for p in args.problems
        ]
        if args.action == "ask":
            start = args.start_line if args.start_line is not None else 0
            end = args.end_line if args.end_line is not None else start
            return actions.ask_prompt(
                path=path,
                text=text,
                start_line=start,
                end_line=end,
                question=args.question,
                cwd=cwd,
            )
        if not problems:
            raise invalid_params(f"{_COMMAND_OF[args.action]}: problems must not be empty")
        if args.action == "explain":
            return actions.explain_prompt(path=path, text=text, problems=problems, cwd=cwd)
        return actions.fix_prompt(path=path, text=text, problems=problems, cwd=cwd)

    def _session_for(self, path: Path, session_id: str | None) -> Session:
        sessions = self.server.sessions
        if session_id is not None:
            session = sessions.sessions.get(session_id)
            if session is None:
                raise invalid_params(f"unknown session id: {session_id!r}")
            if not session.busy:
                return session
        folders = self.server.workspace_roots()
        containing = [f for f in folders if path.is_relative_to(f)]
        cwd = containing[0] if containing else folders[0] if folders else path.parent
        extra = [f for f in folders if f != cwd]
        return sessions.new(cwd=cwd, additional_directories=extra)

    async def _run(self, session: Session, parts: list[PromptPart]) -> None:
        ls = self.server
        progress = await TurnProgress.start(ls, on_cancel=session.cancel)
        ls.host.progress[session.id] = progress
        ls.diagnostics.last_session = session.id
        stop = "cancelled"
        error: str | None = None
        usage: dict[str, int] | None = None
        try:
            result = await session.prompt(parts)
            stop, error = result.stop_reason, result.error
            usage = usage_json(result.usage)
        except Exception as exc:  # the turn runs unattended: report, never crash the server
            logger.exception("agent command turn failed")
            error = str(exc)
        finally:
            progress.end(stop)
            if ls.host.progress.get(session.id) is progress:
                del ls.host.progress[session.id]
            end: dict[str, Any] = {"sessionId": session.id, "stopReason": stop}
            if usage is not None:
                end["usage"] = usage
            if error is not None:
                end["error"] = error
            ls.protocol.notify(methods.SESSION_DID_END, end)

    def _suggestion_taken(self, raw: Any) -> dict[str, Any]:
        try:
            args = SuggestionArgs.model_validate(raw)
        except ValidationError as exc:
            raise invalid_params(
                f"{actions.COMMAND_APPLY_SUGGESTION}: {exc.errors()[0]['msg']}"
            ) from None
        path = self.server.diagnostics._path(args.uri)
        engine = self.server.diagnostics.suggestions
        if path is not None and engine is not None:
            engine.take(path, args.id)
        return {}


def _plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _turn_title(args: ActionArgs, path: Path) -> str:
    """The chat title of an agent command's turn: the file, and for a fix the first problem
    it fixes (``Fix with agent: shop.py:3 — undefined name tax_rate (+1 more)``; lines
    1-based)."""
    title = f"{_TITLE_OF[args.action]}: {path.name}"
    if args.action != "fix" or not args.problems:
        return title
    first = args.problems[0]
    message = (first.message.strip().splitlines() or [""])[0][:80]
    more = f" (+{len(args.problems) - 1} more)" if len(args.problems) > 1 else ""
    return f"{title}:{first.line + 1} — {message}{more}"
