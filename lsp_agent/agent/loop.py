"""The agent loop: model → tools → model, until the model ends its turn.

:func:`run_turn` runs one prompt and returns its :class:`TurnResult`. It reads in one screen:
every step of the turn (:class:`_Turn`: ``submit``, ``request``, ``cut_short``, ``run_tools``,
``end``) returns its verdict, :class:`Continue` (send the next request) or :class:`Finish`
(the turn ends, and why), and sends every update for the user through ``env.ctx.emit``, the
one channel the executor, the tools and verification use too.

Each step works on an immutable :class:`LoopState`; every new history is committed to the
session at once, so a cancellation at any ``await`` leaves a history in which every
``tool_use`` has exactly one ``tool_result`` (synthesised as interrupted where needed).
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from lsp_agent.agent.env import TurnEnv
from lsp_agent.agent.executor import execute_tool_uses
from lsp_agent.agent.frozen import evolve
from lsp_agent.agent.turn_hooks import TurnHooks, check_stop, note_chunks, submit_prompt
from lsp_agent.context.compaction import Boundary, is_compacted_start
from lsp_agent.context.engine import CompactionError, Prepared, is_prompt_too_long
from lsp_agent.model.base import ModelError
from lsp_agent.model.types import (
    AssistantResponse,
    ContentBlock,
    Message,
    ModelRequest,
    ResponseDone,
    RetryWait,
    TextBlock,
    TextDelta,
    ThinkingDelta,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseStart,
    Usage,
)
from lsp_agent.protocol.events import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentItem,
    ContextCompacted,
    ModelRetry,
    SessionUpdate,
    TextContent,
    ToolCall,
    ToolCallUpdate,
    ToolKind,
    UsageUpdate,
)

if TYPE_CHECKING:
    from lsp_agent.diagnostics.turn import TurnVerification

PromptStopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
"""ACP ``StopReason``: how a prompt ended, as the doors report it."""

TerminalReason = Literal[
    "completed",
    "aborted",
    "model_error",
    "max_turns",
    "max_tokens",
    "refusal",
    "context_window",
    "hook_stopped",
    "max_budget",
]
"""Why the loop stopped (finer than the stop reason; for logs and the headless door).
``hook_stopped``: a UserPromptSubmit hook blocked the prompt, or a tool hook answered
``continue: false`` (see :mod:`lsp_agent.agent.turn_hooks`). ``max_budget``: the door's
spending limit was reached (``AgentConfig.budget_spent``)."""

INTERRUPTED = "Interrupted by the user before this tool call finished; it may not have run."
CONTINUE_NUDGE = (
    "Your previous response was cut off by the output token limit. Continue exactly where you "
    "left off, without repeating anything."
)
INTERRUPTED_MARKER = "[Request interrupted by user]"


@dataclass(frozen=True, kw_only=True)
class LoopState:
    """The loop's state after one step (immutable: each step makes a new one).

    ``requests`` counts model requests sent and ``usage`` sums their usage; ``max_tokens`` is
    the current output cap (raised once after a ``max_tokens`` stop); ``nudges`` counts
    "continue" nudges, ``stop_continues`` how often Stop hooks sent the model on, and
    ``recovered`` whether a "prompt is too long" answer was already recovered from.
    ``before`` is the history before this prompt (``None``: unknown), restored when a request
    is refused for its size (HTTP 413).
    """

    messages: tuple[Message, ...]
    before: tuple[Message, ...] | None = None
    requests: int = 0
    max_tokens: int
    usage: Usage = dataclasses.field(default_factory=Usage)
    nudges: int = 0
    stop_continues: int = 0
    recovered: bool = False


@dataclass(frozen=True, kw_only=True)
class TurnResult:
    """How one prompt ended: what :func:`run_turn` and :meth:`Session.prompt` return."""

    stop_reason: PromptStopReason
    terminal: TerminalReason
    usage: Usage
    requests: int
    final_text: str = ""
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class Continue:
    """A step's verdict: send the next model request."""


@dataclass(frozen=True, kw_only=True)
class Finish:
    """A step's verdict: the turn ends, with this stop reason (ACP), terminal reason, final
    text for the user and error."""

    stop_reason: PromptStopReason
    terminal: TerminalReason
    text: str = ""
    error: str | None = None


Step = Continue | Finish
"""What every step of the turn returns."""


@dataclass(frozen=True, kw_only=True)
class Reply:
    """What a model request gave when its stream completed: the response and the ids of the
    tool calls already announced to the user while it streamed."""

    response: AssistantResponse
    announced: frozenset[str]


def _retry_update(wait: RetryWait) -> ModelRetry:
    """The session update that shows a retry the model client is about to make."""
    return ModelRetry(
        attempt=wait.attempt,
        max_retries=wait.max_retries,
        delay_ms=wait.delay_ms,
        error=wait.error,
        status=wait.status,
        message=wait.message,
    )


def _abandoned_calls(announced: set[str], why: str) -> list[SessionUpdate]:
    """Close the tool calls already announced to the client from a response that never
    completed: they will not run, and must not stay ``pending`` in the editor."""
    return [
        ToolCallUpdate(
            tool_call_id=tool_call_id,
            status="failed",
            content=(ContentItem(content=TextContent(text=f"{why} The tool did not run.")),),
        )
        for tool_call_id in sorted(announced)
    ]


def start_messages(history: tuple[Message, ...], user: Message) -> tuple[Message, ...]:
    """Append the user's message; a history that ends with a user message (an interrupted
    turn, or a compacted history) is merged into it so roles keep alternating."""
    if history and history[-1].role == "user":
        last = history[-1]
        marker = () if is_compacted_start(last) else (TextBlock(text=INTERRUPTED_MARKER),)
        merged = Message(role="user", content=(*last.content, *marker, *user.content))
        return (*history[:-1], merged)
    return (*history, user)


async def run_turn(state: LoopState, env: TurnEnv) -> TurnResult:
    """Run one prompt to its end; see the module docstring. Raises ``CancelledError`` when
    cancelled, after committing the repaired history."""
    turn = _Turn.start(env, state)
    try:
        step: Step = await turn.submit()
        while isinstance(step, Continue):
            limit = turn.over_limit()
            if limit is not None:
                step = limit
                break
            reply = await turn.request()
            if not isinstance(reply, Reply):
                step = reply  # the request failed (Finish), or was compacted to retry (Continue)
                continue
            cut = turn.cut_short(reply.response)
            if cut is not None:
                step = cut
                continue
            assistant = turn.commit(reply.response.message())
            uses = assistant.tool_uses()
            if uses:
                step = await turn.run_tools(uses, announced=reply.announced)
            else:
                step = await turn.end(reply.response)
        return turn.result(step)
    except asyncio.CancelledError:
        turn.abort()
        raise
    finally:
        if turn.verification is not None:
            turn.verification.close()


@dataclass(kw_only=True)
class _Turn:
    """The steps of one prompt. Each returns its verdict (a :data:`Step`, or a :class:`Reply`);
    updates leave by ``emit`` only. ``state`` is the latest state (replaced, never mutated;
    what a cancellation repairs); ``results`` holds the results of the running batch's calls
    as they finish."""

    env: TurnEnv
    state: LoopState
    hooks: TurnHooks | None
    verification: TurnVerification | None
    results: dict[str, ToolResultBlock] = dataclasses.field(default_factory=dict)

    @classmethod
    def start(cls, env: TurnEnv, state: LoopState) -> _Turn:
        """The turn's hooks (remembering a tool hook's request to end the turn) and
        verification (``None`` when off or without a diagnostics service)."""
        hooks = TurnHooks.around(env.hooks) if env.hooks is not None else None
        env = dataclasses.replace(env, hooks=hooks) if hooks is not None else env
        verification: TurnVerification | None = None
        if env.ctx.diagnostics is not None:
            # Imported here, not at module level: neither server start-up nor a session
            # without a diagnostics service (most of run -p) needs it.
            from lsp_agent.diagnostics.turn import TurnVerification

            verification = TurnVerification.start(
                diagnostics=env.ctx.diagnostics,
                config=env.config.verify,
                cwd=env.ctx.cwd,
                workspace=env.ctx.workspace,
                emit=env.ctx.emit,
            )
        return cls(env=env, state=state, hooks=hooks, verification=verification)

    def emit(self, update: SessionUpdate) -> None:
        """Send an update to the session's user (the turn's one channel)."""
        self.env.ctx.emit(update)

    def commit(self, message: Message) -> Message:
        """Append ``message`` to the history and store it in the session at once."""
        self.state = _commit(self.env, self.state, message)
        return message

    def result(self, finish: Finish) -> TurnResult:
        """The turn's result: ``finish`` with the usage and requests of the latest state."""
        return TurnResult(
            stop_reason=finish.stop_reason,
            terminal=finish.terminal,
            usage=self.state.usage,
            requests=self.state.requests,
            final_text=finish.text,
            error=finish.error,
        )

    def abort(self) -> None:
        """The turn was cancelled: commit the repaired history (every ``tool_use`` answered),
        mark the unanswered calls failed for the user, and report the last state."""
        repaired = _repair(self.state.messages, self.results)
        self.env.commit(repaired)
        if repaired is not self.state.messages:
            # Tell the user too: interrupted calls must not keep spinning in the editor.
            for block in repaired[-1].content:
                if isinstance(block, ToolResultBlock) and block.tool_use_id not in self.results:
                    self.emit(
                        ToolCallUpdate(
                            tool_call_id=block.tool_use_id,
                            status="failed",
                            content=(ContentItem(content=TextContent(text=block.content)),),
                        )
                    )
        if self.env.aborted is not None:
            self.env.aborted(dataclasses.replace(self.state, messages=repaired))

    def over_limit(self) -> Finish | None:
        """The turn's request budget is spent (``max_turns`` model requests), or the door's
        spending limit is reached (``budget_spent``): it ends."""
        max_turns = self.env.config.max_turns
        if max_turns is not None and self.state.requests >= max_turns:
            return Finish(stop_reason="max_turn_requests", terminal="max_turns")
        spent = self.env.config.budget_spent
        message = spent() if spent is not None else None
        if message is not None:
            return Finish(stop_reason="end_turn", terminal="max_budget", error=message)
        return None

    async def submit(self) -> Step:
        """UserPromptSubmit hooks, then the prompt enters the history."""
        if self.hooks is not None:
            gate = await submit_prompt(
                self.hooks,
                self.state.messages,
                mode=self.env.permissions.mode,
                marker=INTERRUPTED_MARKER,
            )
            self.show_notes(gate.notes)
            if gate.blocked is not None:
                # The prompt never reaches the model nor the history (Claude Code erases it).
                self.emit(AgentMessageChunk(content=TextContent(text=gate.blocked)))
                return Finish(stop_reason="end_turn", terminal="hook_stopped", text=gate.blocked)
            self.state = dataclasses.replace(self.state, messages=gate.messages)
        self.env.commit(self.state.messages)
        return Continue()

    async def request(self) -> Reply | Step:
        """One model request, streamed to the user as chunks and tool-call announcements."""
        env = self.env
        tools = env.tools.specs()
        if env.context is not None:
            prepared = await env.context.prepare(
                system=env.system,
                tools=tools,
                messages=self.state.messages,
                max_tokens=self.state.max_tokens,
            )
            self.adopt(prepared)
        request = ModelRequest(
            model=env.config.model,
            system=env.system,
            messages=self.state.messages,
            tools=tools,
            max_tokens=self.state.max_tokens,
        )
        announced: set[str] = set()
        response: AssistantResponse | None = None
        try:
            async for event in env.model.stream(request):
                if isinstance(event, TextDelta):
                    self.emit(AgentMessageChunk(content=TextContent(text=event.text)))
                elif isinstance(event, ThinkingDelta):
                    self.emit(AgentThoughtChunk(content=TextContent(text=event.thinking)))
                elif isinstance(event, ToolUseStart):
                    announced.add(event.id)
                    kind = _kind(env, event.name)
                    self.emit(ToolCall(tool_call_id=event.id, title=event.name, kind=kind))
                elif isinstance(event, ResponseDone):
                    response = event.response
                elif isinstance(event, RetryWait):
                    self.emit(_retry_update(event))
        except ModelError as exc:
            return await self.failed(request, exc, announced)
        if response is None:
            for update in _abandoned_calls(announced, "The model's answer broke off."):
                self.emit(update)
            error = "the model stream ended without a complete response"
            return Finish(stop_reason="end_turn", terminal="model_error", error=error)
        self.state = evolve(
            self.state, requests=self.state.requests + 1, usage=self.state.usage + response.usage
        )
        if env.context is not None:
            env.context.observe(
                system=env.system, tools=tools, messages=request.messages, usage=response.usage
            )
        self.emit(
            UsageUpdate(
                used=response.usage.context_tokens + response.usage.output_tokens,
                size=env.context.window if env.context is not None else 200_000,
            )
        )
        return Reply(response=response, announced=frozenset(announced))

    async def failed(self, request: ModelRequest, exc: ModelError, announced: set[str]) -> Step:
        """A failed request: recover from "prompt is too long" once, else end the turn (the
        calls the broken answer announced are closed as failed)."""
        if self.env.context is not None and not self.state.recovered and is_prompt_too_long(exc):
            return await self.recover(request, exc)
        for update in _abandoned_calls(announced, f"The model's answer broke off: {exc}"):
            self.emit(update)
        if exc.status == 413 and self.state.before is not None:
            return self.drop_oversized(exc)
        return Finish(stop_reason="end_turn", terminal="model_error", error=str(exc))

    def drop_oversized(self, exc: ModelError) -> Finish:
        """A request refused for its size (HTTP 413, before or after sending): the history goes
        back to what it was before this prompt, or every later request would carry the same
        bulk and be refused too. Files the turn changed stay changed."""
        before = self.state.before
        assert before is not None
        self.state = dataclasses.replace(self.state, messages=before)
        self.env.commit(before)
        error = (
            f"{exc} This prompt and what the turn added were dropped from the conversation, so "
            "later prompts can be sent (files the turn changed stay changed)."
        )
        return Finish(stop_reason="end_turn", terminal="model_error", error=error)

    def adopt(self, prepared: Prepared) -> None:
        """Take the history the context engine prepared, and tell the user what it did."""
        if prepared.messages != self.state.messages:
            self.state = dataclasses.replace(self.state, messages=prepared.messages)
            self.env.commit(prepared.messages)
        if prepared.boundary is not None and self.env.context is not None:
            self.emit(compacted_update(prepared.boundary, prepared.summary))
            # The meter drops at once (an estimate until the next response's usage).
            window = self.env.context.window
            self.emit(UsageUpdate(used=prepared.boundary.tokens_after, size=window))
        if prepared.notice is not None:
            notice = f"\n\n{prepared.notice}\n\n"
            self.emit(AgentMessageChunk(content=TextContent(text=notice)))

    async def recover(self, request: ModelRequest, exc: ModelError) -> Step:
        """ "Prompt is too long": compact once (clearing first) and retry; if that fails the
        turn ends with a clear error and the history stays as it was."""
        assert self.env.context is not None
        self.state = dataclasses.replace(self.state, recovered=True)
        try:
            prepared = await self.env.context.recover(
                system=request.system,
                tools=request.tools,
                messages=self.state.messages,
                max_tokens=self.state.max_tokens,
            )
        except CompactionError as failure:
            error = f"{exc} -- and compacting the conversation failed: {failure}"
            return Finish(stop_reason="end_turn", terminal="context_window", error=error)
        self.adopt(prepared)
        return Continue()

    def cut_short(self, response: AssistantResponse) -> Step | None:
        """Handle output limits; a verdict when the response's tool calls must not run
        (``None``: the response is complete). ``max_tokens``: one escalated retry, then
        bounded "continue" nudges; a full context window ends the turn (retrying cannot
        help)."""
        config = self.env.config
        if response.stop_reason == "model_context_window_exceeded":
            self.commit(_complete_blocks(response).message())
            error = "the conversation no longer fits the model's context window"
            return Finish(stop_reason="max_tokens", terminal="context_window", error=error)
        if response.stop_reason != "max_tokens":
            return None
        if self.state.max_tokens < config.escalated_max_tokens and not self.state.nudges:
            self.state = dataclasses.replace(self.state, max_tokens=config.escalated_max_tokens)
            return Continue()
        self.commit(_complete_blocks(response).message())
        if self.state.nudges >= config.max_continue_nudges:
            return Finish(stop_reason="max_tokens", terminal="max_tokens")
        self.state = dataclasses.replace(self.state, nudges=self.state.nudges + 1)
        self.commit(Message.user_text(CONTINUE_NUDGE))
        return Continue()

    async def run_tools(self, uses: tuple[ToolUseBlock, ...], *, announced: frozenset[str]) -> Step:
        """Run the calls; their results (and the diagnostics of what they wrote) go back."""
        for use in uses:
            if use.id in announced:
                self.emit(ToolCallUpdate(tool_call_id=use.id, raw_input=use.input))
            else:
                kind = _kind(self.env, use.name)
                self.emit(
                    ToolCall(tool_call_id=use.id, title=use.name, kind=kind, raw_input=use.input)
                )
        await execute_tool_uses(uses, env=self.env.executor, results=self.results)
        notes: list[ContentBlock] = []
        if self.verification is not None:
            check = await self.verification.after_batch()
            if check is not None and check.attachment is not None:
                notes.append(TextBlock(text=check.attachment))
        if self.env.instructions is not None:
            done = (self.results[u.id] for u in uses)
            loaded = self.env.instructions(
                tuple(
                    (u.name, u.input, None if r.is_error else r.content)
                    for u, r in zip(uses, done, strict=True)
                )
            )
            if loaded:
                notes.append(TextBlock(text=loaded))
        content = (*(self.results[u.id] for u in uses), *notes)  # blocks built typed
        self.commit(Message.model_construct(role="user", content=content))
        self.results = {}
        if self.env.rewrite is not None:
            rewritten = self.env.rewrite(self.state.messages)
            if rewritten is not self.state.messages:
                self.state = dataclasses.replace(self.state, messages=rewritten)
                self.env.commit(rewritten)
        hook_stop = self.hooks.take_stop() if self.hooks is not None else None
        if hook_stop is not None:
            self.emit(AgentMessageChunk(content=TextContent(text=hook_stop)))
            return Finish(stop_reason="end_turn", terminal="hook_stopped", text=hook_stop)
        return Continue()

    async def end(self, response: AssistantResponse) -> Step:
        """The model ended its turn: finish, unless verification or a Stop hook sends it on."""
        if response.stop_reason == "pause_turn":
            return Continue()
        text = response.message().text()
        if response.stop_reason == "refusal":
            return Finish(stop_reason="refusal", terminal="refusal", text=text)
        if self.verification is not None:
            # In "fix" mode a turn that leaves new errors gets a bounded nudge.
            nudge = await self.verification.at_end()
            if nudge is not None:
                self.commit(Message.user_text(nudge))
                return Continue()
        if self.hooks is not None:
            gate = await check_stop(
                self.hooks, continued=self.state.stop_continues, mode=self.env.permissions.mode
            )
            self.show_notes(gate.notes)
            if gate.feedback is not None:
                self.state = dataclasses.replace(
                    self.state, stop_continues=self.state.stop_continues + 1
                )
                self.commit(Message.user_text(gate.feedback))
                return Continue()
        return Finish(stop_reason="end_turn", terminal="completed", text=text)

    def show_notes(self, notes: tuple[str, ...]) -> None:
        """Hook messages and errors, shown to the user."""
        for chunk in note_chunks(notes):
            self.emit(chunk)


def compacted_update(boundary: Boundary, summary: str) -> ContextCompacted:
    """The ``context_compacted`` update for a compaction's boundary record."""
    return ContextCompacted(
        trigger=boundary.trigger,
        tokens_before=boundary.tokens_before,
        tokens_after=boundary.tokens_after,
        prompts_kept=boundary.prompts_kept,
        files=boundary.files,
        summary=summary,
    )


def _kind(env: TurnEnv, name: str) -> ToolKind:
    tool = env.tools.get(name)
    return tool.kind if tool is not None else "other"


def _commit(env: TurnEnv, state: LoopState, message: Message) -> LoopState:
    new = evolve(state, messages=(*state.messages, message))
    env.commit(new.messages)
    return new


def _complete_blocks(response: AssistantResponse) -> AssistantResponse:
    """Drop tool_use blocks cut off by the token limit (their input is incomplete)."""
    content = tuple(b for b in response.content if not isinstance(b, ToolUseBlock))
    if not content:
        content = (TextBlock(text="(no output)"),)
    return response.model_copy(update={"content": content})


def _repair(messages: tuple[Message, ...], done: dict[str, ToolResultBlock]) -> tuple[Message, ...]:
    """Answer every unanswered tool_use of the last assistant message."""
    if not messages or messages[-1].role != "assistant" or not messages[-1].tool_uses():
        return messages
    answers = tuple(
        done.get(u.id) or ToolResultBlock(tool_use_id=u.id, content=INTERRUPTED, is_error=True)
        for u in messages[-1].tool_uses()
    )
    return (*messages, Message(role="user", content=answers))
