"""Scenario files for the scripted Messages-API server: what it expects and what it answers.

A scenario is a list of steps; each ``POST /v1/messages`` consumes the next one. A step checks
the request against its ``expect`` (all fields optional) and then either answers with a
``response`` (streamed as SSE when the request asks for ``"stream": true``, else a JSON
``Message``) or with an ``error`` (HTTP status + the Messages API error body). JSON shape::

    {"name": "fix_median", "description": "...", "prompt": "optional user prompt",
     "steps": [
       {"expect": {"tools_include": ["Read"], "last_user_contains": "fix",
                   "tool_results": [{"is_error": true, "contains": "FAILED"}]},
        "response": {"content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_01", "name": "Read",
             "input": {"file_path": "{{cwd}}/pkg/a.py"}}],
          "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}}},
       {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded",
                  "retry_after_s": 0}},
       {"response": {...}, "stall_after_events": 3},
       {"response": {...}, "delay_ms": 50, "chunk_chars": 20}]}

This module is pure (no I/O besides :func:`load_scenario`): models, ``{{name}}`` substitution
and loading. Request checking and rendering a response as a JSON message or as SSE events live
in :mod:`lsp_agent.testing.wire`; the server that plays scenarios is
:mod:`lsp_agent.testing.scripted`. The builders at the end (:func:`scenario`,
:func:`reply`, :func:`error`, :func:`text`, :func:`thinking`, :func:`tool_use`,
:func:`expecting`) write scenarios in Python, e.g.
``scenario(reply("Looking.", tool_use("Read", {"file_path": "/a"})), reply("Done."))``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class ScenarioError(ValueError):
    """A scenario file could not be read or does not match the scenario schema."""


class _Strict(BaseModel):
    # Typos in hand-written scenario files must fail loudly, not be ignored.
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---- expectations -----------------------------------------------------------------------------


class ToolResultExpect(_Strict):
    """One expected ``tool_result`` block: its ``is_error`` flag and/or a substring."""

    is_error: bool | None = None
    contains: str | None = None


class Expect(_Strict):
    """Checks on the request a step answers; every field is optional.

    ``tools_include``: tool names that must be offered. ``last_user_contains``: substring of the
    text of the last user message (text blocks and tool_result contents). ``tool_results``: the
    tool_result blocks of the last user message, in order (their count must match).
    ``max_tokens_at_least``: lower bound on ``max_tokens``. ``system_contains``: substring of the
    system prompt (all text blocks joined). ``stream``: whether the request must stream.
    ``request_contains`` / ``request_lacks``: a substring that must / must not appear anywhere
    in the request's system prompt and messages (as JSON text; where a context block is placed
    does not matter).
    """

    tools_include: tuple[str, ...] = ()
    last_user_contains: str | None = None
    tool_results: tuple[ToolResultExpect, ...] | None = None
    max_tokens_at_least: int | None = None
    system_contains: str | None = None
    stream: bool | None = None
    request_contains: str | None = None
    request_lacks: str | None = None


# ---- responses --------------------------------------------------------------------------------


class ScriptedText(_Strict):
    """A text block."""

    type: Literal["text"] = "text"
    text: str


class ScriptedThinking(_Strict):
    """A thinking block, streamed as ``thinking_delta`` pieces then one ``signature_delta``."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = "sig_scripted"


class ScriptedToolUse(_Strict):
    """A tool_use block. ``id`` defaults to ``toolu_scripted_<step>_<block>``.

    ``input_json`` (optional) is the exact JSON text streamed as ``input_json_delta`` pieces
    instead of ``json.dumps(input)``; it may be invalid JSON, to test how a client copes.
    A non-streaming request cannot carry invalid JSON: the server then reports a failure.
    """

    type: Literal["tool_use"] = "tool_use"
    id: str | None = None
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    input_json: str | None = None


class ScriptedRaw(_Strict):
    """Any other content block (``redacted_thinking``, ``server_tool_use``...), sent verbatim
    in ``content_block_start`` (streaming) or in ``content`` (JSON), without deltas."""

    type: Literal["raw"] = "raw"
    content_block: dict[str, Any]


ScriptedBlock = Annotated[
    ScriptedText | ScriptedThinking | ScriptedToolUse | ScriptedRaw, Field(discriminator="type")
]


class ScriptedUsage(_Strict):
    """Token counts to report; an unset field is estimated (request bytes / 4 for input,
    content characters / 4 for output, 0 for the cache fields)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


class ScriptedResponse(_Strict):
    """One assistant message. ``stop_reason`` defaults to ``tool_use`` when a tool_use block is
    present, else ``end_turn``; ``model`` defaults to the model named in the request."""

    content: tuple[ScriptedBlock, ...]
    stop_reason: str | None = None
    usage: ScriptedUsage = ScriptedUsage()
    model: str | None = None


class ScriptedError(_Strict):
    """An HTTP error answer. ``type`` defaults from ``status`` (429 ``rate_limit_error``, 529
    ``overloaded_error``, ...). ``retry_after_s`` sets ``retry-after`` and ``retry-after-ms``
    headers; ``0`` is sent as ``retry-after-ms: 1`` because the SDK ignores a zero wait and
    falls back to its exponential backoff (0.5 s and up)."""

    status: int = Field(ge=400, le=599)
    type: str | None = None
    message: str = "Scripted error."
    retry_after_s: float | None = Field(default=None, ge=0)


class SseError(_Strict):
    """An ``event: error`` sent in the middle of a stream, after ``after_events`` events."""

    type: str = "overloaded_error"
    message: str = "Overloaded"
    after_events: int = Field(default=1, ge=0)


class Step(_Strict):
    """One scripted exchange: exactly one of ``response`` and ``error``.

    ``delay_ms``: wait before answering (time to first byte). ``chunk_chars``: size of each
    text/thinking/input_json delta (characters). ``chunk_delay_ms``: pause between deltas.
    At most one of ``stall_after_events`` (send N SSE events, then hang until the client hangs
    up), ``drop_after_events`` (send N events, then close the connection mid-body),
    ``end_after_events`` (send N events, then end the body cleanly, as a proxy that cuts
    streams would) and ``sse_error``; these need a streaming request. ``gate``: the answer
    waits until the test opens the gate of that name (``ScriptedServer.open_gate``), so a test
    can see what the client does before the answer arrives. ``note`` is a comment.
    """

    expect: Expect | None = None
    response: ScriptedResponse | None = None
    error: ScriptedError | None = None
    delay_ms: int = Field(default=0, ge=0)
    chunk_chars: int = Field(default=20, ge=1)
    chunk_delay_ms: int = Field(default=0, ge=0)
    stall_after_events: int | None = Field(default=None, ge=0)
    drop_after_events: int | None = Field(default=None, ge=0)
    end_after_events: int | None = Field(default=None, ge=0)
    sse_error: SseError | None = None
    gate: str | None = None
    note: str | None = None

    @model_validator(mode="after")
    def _one_answer(self) -> Step:
        if (self.response is None) == (self.error is None):
            raise ValueError("a step needs exactly one of 'response' and 'error'")
        interrupts = [
            name
            for name, value in (
                ("stall_after_events", self.stall_after_events),
                ("drop_after_events", self.drop_after_events),
                ("end_after_events", self.end_after_events),
                ("sse_error", self.sse_error),
            )
            if value is not None
        ]
        if len(interrupts) > 1:
            raise ValueError(f"at most one of {', '.join(interrupts)} per step")
        if interrupts and self.response is None:
            raise ValueError(f"{interrupts[0]} needs a 'response' step")
        return self

    @property
    def streams_only(self) -> bool:
        """Whether the step can only be played to a streaming request."""
        return self.interrupt_after is not None

    @property
    def interrupt_after(self) -> int | None:
        """After how many SSE events the stream is interrupted (``None``: it is not)."""
        for value in (self.stall_after_events, self.drop_after_events, self.end_after_events):
            if value is not None:
                return value
        return self.sse_error.after_events if self.sse_error is not None else None


class Route(_Strict):
    """A side script: every request matching ``expect`` is answered with ``response`` (as many
    times as it comes) without consuming a step. Used for requests the agent makes on its own
    schedule, such as compaction summaries, so the main script stays a plain sequence."""

    expect: Expect
    response: ScriptedResponse
    note: str | None = None


class Scenario(_Strict):
    """A named list of steps. ``prompt`` is the user prompt the script was written for
    (for demos and end-to-end tests); ``metadata`` is free-form for the scenario's users;
    ``routes`` are checked, in order, before the next step (see :class:`Route`).
    ``background`` holds one script per background kind (``summary``, ``title``): a request
    carrying the ``x-lsp-agent-background: <kind>`` header consumes the next step of that
    script instead of a main step; one with no script (left) is a failure, except that a
    server with a responder lets it answer the kinds that have no script."""

    name: str
    description: str = ""
    prompt: str | None = None
    steps: tuple[Step, ...]
    routes: tuple[Route, ...] = ()
    background: dict[str, tuple[Step, ...]] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def with_variables(self, variables: Mapping[str, str]) -> Scenario:
        """A copy with ``{{name}}`` replaced by ``variables[name]`` in every string.

        Placeholders naming no given variable are left as they are (scripts may contain
        template syntax of their own, e.g. Jinja or Go templates in file contents).
        """
        if not variables:
            return self
        data = _substitute(self.model_dump(mode="json"), variables)
        return Scenario.model_validate(data)


_PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")


def _substitute(value: Any, variables: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: variables.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [_substitute(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, variables) for k, v in value.items()}
    return value


# ---- loading ----------------------------------------------------------------------------------

_BUNDLED_DIR = "scenarios"


def bundled_scenarios() -> list[str]:
    """Names of the scenarios shipped in ``lsp_agent/testing/scenarios/`` (file stems, sorted)."""
    root = resources.files("lsp_agent.testing").joinpath(_BUNDLED_DIR)
    return sorted(p.name[: -len(".json")] for p in root.iterdir() if p.name.endswith(".json"))


def parse_scenario(text: str, *, source: str = "<string>") -> Scenario:
    """Parse scenario JSON ``text``; ``source`` names it in errors.

    Raises :class:`ScenarioError` naming ``source`` and each schema problem.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{source}: not valid JSON: {exc}") from exc
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors()
        )
        raise ScenarioError(f"{source}: not a valid scenario: {problems}") from exc


def load_scenario(source: str | Path) -> Scenario:
    """Load a scenario from a JSON file path, or by the name of a bundled scenario.

    Raises :class:`ScenarioError` when the file is missing, unreadable or invalid.
    """
    path = Path(source)
    if path.is_file():
        try:
            text_ = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScenarioError(f"{path}: cannot read: {exc}") from exc
        return parse_scenario(text_, source=str(path))
    name = str(source)
    if re.fullmatch(r"[A-Za-z0-9_.-]+", name) and name in bundled_scenarios():
        resource = resources.files("lsp_agent.testing").joinpath(_BUNDLED_DIR, f"{name}.json")
        return parse_scenario(resource.read_text(encoding="utf-8"), source=f"bundled:{name}")
    known = ", ".join(bundled_scenarios()) or "none"
    raise ScenarioError(f"{source}: no such scenario file, nor a bundled scenario ({known})")


# ---- builders (for scenarios written in Python) -----------------------------------------------


def text(value: str) -> ScriptedText:
    """A text block."""
    return ScriptedText(text=value)


def thinking(value: str, signature: str = "sig_scripted") -> ScriptedThinking:
    """A thinking block with its signature."""
    return ScriptedThinking(thinking=value, signature=signature)


def tool_use(
    name: str,
    input: Mapping[str, Any] | None = None,
    *,
    id: str | None = None,
    input_json: str | None = None,
) -> ScriptedToolUse:
    """A tool_use block; see :class:`ScriptedToolUse`."""
    return ScriptedToolUse(id=id, name=name, input=dict(input or {}), input_json=input_json)


def reply(
    *content: ScriptedText | ScriptedThinking | ScriptedToolUse | ScriptedRaw | str,
    expect: Expect | None = None,
    stop_reason: str | None = None,
    usage: ScriptedUsage | None = None,
    **step_options: Any,
) -> Step:
    """A response step; plain strings become text blocks. ``step_options`` are the other
    :class:`Step` fields (``delay_ms``, ``chunk_chars``, ``stall_after_events``...)."""
    blocks = tuple(ScriptedText(text=c) if isinstance(c, str) else c for c in content)
    response = ScriptedResponse(
        content=blocks, stop_reason=stop_reason, usage=usage or ScriptedUsage()
    )
    return Step(expect=expect, response=response, **step_options)


def error(
    status: int,
    message: str = "Scripted error.",
    *,
    type: str | None = None,
    retry_after_s: float | None = None,
    expect: Expect | None = None,
) -> Step:
    """An error step answering HTTP ``status``; see :class:`ScriptedError`."""
    return Step(
        expect=expect,
        error=ScriptedError(status=status, type=type, message=message, retry_after_s=retry_after_s),
    )


def scenario(
    *steps: Step,
    name: str = "inline",
    description: str = "",
    background: Mapping[str, Sequence[Step]] | None = None,
) -> Scenario:
    """A scenario from steps written in Python; ``background``: its background scripts, by
    kind (see :class:`Scenario`)."""
    scripts = {kind: tuple(script) for kind, script in (background or {}).items()}
    return Scenario(name=name, description=description, steps=steps, background=scripts)


def expecting(
    *,
    tools_include: Sequence[str] = (),
    last_user_contains: str | None = None,
    tool_results: Sequence[ToolResultExpect] | None = None,
    max_tokens_at_least: int | None = None,
    system_contains: str | None = None,
    stream: bool | None = None,
    request_contains: str | None = None,
    request_lacks: str | None = None,
) -> Expect:
    """An :class:`Expect` with keyword arguments (sequences accepted for the tuple fields)."""
    return Expect(
        tools_include=tuple(tools_include),
        last_user_contains=last_user_contains,
        tool_results=tuple(tool_results) if tool_results is not None else None,
        max_tokens_at_least=max_tokens_at_least,
        system_contains=system_contains,
        stream=stream,
        request_contains=request_contains,
        request_lacks=request_lacks,
    )
