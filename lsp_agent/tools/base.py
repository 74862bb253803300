"""The Tool base class, the context a tool runs in, and tool errors.

A tool is a class with a pydantic input model (its JSON Schema is what the model sees), a name
and input shape taken from Claude Code, and two steps:

``prepare(input, ctx)``
    Work out what the call would do, without side effects: a title, and for edits the
    :class:`~lsp_agent.protocol.documents.FileChange` list and diff shown in the permission
    prompt. Raises :class:`ToolError` when the call cannot work (file not found, ambiguous edit).
``call(input, prepared, ctx)``
    Do it, after the permission engine said yes. Must re-validate what ``prepare`` assumed
    (time-of-check/time-of-use): changes carry their base snapshot and are refused if it moved.

Defaults are fail-closed: a tool is not read-only, not concurrency-safe, and assumed to read
and write the disk behind the editor's back unless it declares otherwise.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypeVar

from lsp_agent.model.types import ImageBlock, ToolSpec
from lsp_agent.protocol.documents import FileChange
from lsp_agent.protocol.events import Location, SessionUpdate, ToolCallContent, ToolKind

if TYPE_CHECKING:
    from lsp_agent.diagnostics.service import DiagnosticsService
    from lsp_agent.protocol.host import Host
    from lsp_agent.workspace.workspace import Workspace


class ToolError(Exception):
    """An expected, model-visible failure: the message becomes an ``is_error`` tool_result.

    Write messages for the model: say what was wrong and what to do instead.
    """


class ToolInput(BaseModel):
    """Base of tool input models: unknown keys are rejected (``additionalProperties: false``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


InputT = TypeVar("InputT", bound=ToolInput)

PlanT = TypeVar("PlanT", default=None)
"""What a tool's ``prepare`` worked out for its ``call`` beyond the fields every tool has (an
edit's match position, a glob's compiled matcher); ``None`` for tools that need nothing."""


@dataclass(frozen=True, kw_only=True)
class Prepared(Generic[PlanT]):
    """What a call will do, for the permission prompt and for ``call``.

    ``content`` is shown in the tool call (diffs for edits); ``changes`` are applied by
    ``call``; ``paths`` are the files the call touches (absolute), for permission checks.
    """

    title: str
    content: tuple[ToolCallContent, ...] = ()
    changes: tuple[FileChange, ...] = ()
    paths: tuple[Path, ...] = ()
    locations: tuple[Location, ...] = ()
    data: PlanT | None = None
    """The tool's own plan (``Prepared[EditPlan]``), typed by the tool."""
    needs_approval: str | None = None
    """Why the user must approve this call in every mode (``bypassPermissions`` included),
    e.g. a read-only file whose mode the call would change; doors that cannot ask refuse."""


@dataclass(frozen=True, kw_only=True)
class ToolOutput:
    """The result of a call.

    ``text`` is the tool_result content for the model; ``is_error`` marks failures that are
    not exceptions (a command that exited non-zero); ``content`` is what the user sees in the
    tool call card; ``raw_output`` is structured data for clients (exit code, counts...);
    ``images`` go to the model after ``text`` (an MCP tool's images; the card names them).
    """

    text: str
    is_error: bool = False
    content: tuple[ToolCallContent, ...] = ()
    raw_output: dict[str, Any] | None = None
    images: tuple[ImageBlock, ...] = ()


@dataclass(kw_only=True)
class ReadState:
    """Which files the model has read in this session, and what they held then.

    ``digests`` maps an absolute path to the digest (see ``TextSnapshot.digest``) of the text
    it read; ``Edit`` refuses a file that was never read or changed since. ``versions`` holds
    the editor version read (``None``: from disk); ``calls`` what each ``Read`` call saw, by
    ``tool_use_id`` (path, version, digest), so clearing can tell whether a file changed since.
    """

    digests: dict[Path, str] = field(default_factory=dict)
    versions: dict[Path, int | None] = field(default_factory=dict)
    calls: dict[str, tuple[Path, int | None, str]] = field(default_factory=dict)

    def note_call(self, tool_use_id: str, path: Path) -> None:
        """Remember what the ``Read`` call ``tool_use_id`` of ``path`` just saw."""
        digest = self.digests.get(path)
        if digest is not None:
            self.calls[tool_use_id] = (path, self.versions.get(path), digest)


def _discard(_item: object) -> None:
    """The default sink of :attr:`ToolContext.emit` and :attr:`ToolContext.progress`."""


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """Everything a tool call may use, handed explicitly to ``prepare`` and ``call`` (the run
    context of the call; nothing reaches a tool any other way).

    ``session_id`` names the session the call works for; ``cwd`` is its working directory
    (absolute) and ``roots`` the directories it may touch. ``workspace`` reads and changes
    documents through the door's :class:`~lsp_agent.protocol.host.Host` (:attr:`host`).
    ``read_state`` is what the session read so far. ``diagnostics`` is the session's
    diagnostics service (managed language servers, the editor's diagnostics), ``None`` when
    the door has none. ``emit`` sends a session update to this session's user; ``progress``
    streams the call's output so far (Bash output), set by the executor for each call.
    Cancellation is the task's: a cancelled turn raises ``CancelledError`` at the tool's
    ``await``, and a tool cleans up in ``finally`` (Bash kills its process group).
    """

    session_id: str
    cwd: Path
    roots: tuple[Path, ...]
    workspace: Workspace
    read_state: ReadState
    diagnostics: DiagnosticsService | None = None
    emit: Callable[[SessionUpdate], None] = _discard
    progress: Callable[[str], None] = _discard

    @property
    def host(self) -> Host:
        """The door's host (the one the workspace works through)."""
        return self.workspace.host


class Tool(ABC, Generic[InputT, PlanT]):
    """Base class of all tools. Subclasses set the class attributes and implement ``call``;
    ``Tool[EditInput, EditPlan]`` is a tool whose ``prepare`` hands its ``call`` an
    ``EditPlan`` (``Tool[EchoInput]``: no plan)."""

    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[ToolInput]]
    kind: ClassVar[ToolKind] = "other"
    read_only: ClassVar[bool] = False
    concurrency_safe: ClassVar[bool] = False
    reads_disk: ClassVar[bool] = True
    """The tool reads files from disk rather than through the buffer overlay: edited buffers
    are saved first."""
    writes_disk: ClassVar[bool] = True
    """The tool may change files behind the editor: buffers are refreshed afterwards."""
    resolved_paths: ClassVar[bool] = False
    """``prepare`` puts in ``Prepared.paths`` (and ``target_paths`` returns) only what
    :func:`Path.resolve` just gave (symlinks and ``..`` removed), so the permission engine
    decides on those very paths, the ones the call then opens, instead of resolving them a
    second time."""
    failure_cancels_siblings: ClassVar[bool] = False
    """When a call fails, the calls after it in the same assistant message are not run (they
    may depend on it): Bash."""

    _built_specs: ClassVar[dict[tuple[str, str, type[ToolInput]], ToolSpec]] = {}
    """Specs by what they are made of: generating a JSON schema with pydantic takes
    milliseconds, and every new session's tool set would otherwise do it again for the same
    classes. A memo of a pure function of classes (immutable), bounded by the tool classes."""

    def spec(self) -> ToolSpec:
        """The tool as offered to the model: built once per name, description and input
        model, then shared (a :class:`ToolSpec` is frozen; nobody changes its schema)."""
        key = (self.name, self.description, self.input_model)
        built = Tool._built_specs.get(key)
        if built is None:
            schema = self.input_model.model_json_schema()
            schema.pop("title", None)
            built = ToolSpec(name=self.name, description=self.description, input_schema=schema)
            Tool._built_specs[key] = built
        return built

    def parse(self, raw: dict[str, Any]) -> InputT:
        """Validate raw model input; raises ``pydantic.ValidationError``."""
        return self.input_model.model_validate(raw)  # type: ignore[return-value]

    def title(self, inp: InputT) -> str:
        """A short human title for the call ("Read src/app.py")."""
        return self.name

    def target_paths(self, inp: InputT, ctx: ToolContext) -> tuple[Path, ...] | None:
        """The absolute files the call would touch, worked out from its input alone (path
        resolution only; no existence, type or read-state check whose answer could tell the
        model anything). The executor decides deny and ask rules and the path sandbox on them
        *before* ``prepare``, so a denied path reveals nothing about itself. ``None`` (the
        default): only ``prepare`` knows, and ``prepare`` reveals nothing path-specific."""
        return None

    async def prepare(self, inp: InputT, ctx: ToolContext) -> Prepared[PlanT]:
        """See the module docstring. The default has no side effects to preview."""
        return Prepared(title=self.title(inp))

    @abstractmethod
    async def call(self, inp: InputT, prepared: Prepared[PlanT], ctx: ToolContext) -> ToolOutput:
        """Run the tool. Raise :class:`ToolError` for expected failures."""
