"""The agent loop: model → tools → model, until the model ends its turn.

:func:`agent_loop` is an async generator of session updates that ends with one
:class:`TurnFinished`. Each iteration works on an immutable :class:`LoopState`; every new state is
committed to the session at once, so a cancellation at any ``await`` leaves a history in which
every ``tool_use`` has exactly one ``tool_result`` (synthesised as interrupted where needed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from lsp_agent.agent.env import TurnEnv
from lsp_agent.agent.executor import execute_tool_uses
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
]
"""Why the loop stopped (finer than the stop reason; for logs and the headless door).
``hook_stopped``: a UserPromptSubmit hook blocked the prompt, or a tool hook answered
``continue: false`` (see :mod:`lsp_agent.agent.turn_hooks`)."""

INTERRUPTED = "Interrupted by the user before this tool call finished; it may not have run."
CONTINUE_NUDGE = (
    "Your previous response was cut off by the output token limit. Continue exactly where you "
    "left off, without repeating anything."
)
INTERRUPTED_MARKER = "[Request interrupted by user]"


@dataclass(frozen=True, kw_only=True)
class LoopState:
    """The loop's state after one step (immutable: each step makes a new one)."""

    messages: tuple[Message, ...]
    requests: int = 0
    max_tokens: int
    usage: Usage = dataclasses.field(default_factory=Usage)
    nudges: int = 0


@dataclass(frozen=True, kw_only=True)
class TurnFinished:
    """The last event of :func:`agent_loop`."""

    stop_reason: PromptStopReason
    terminal: TerminalReason
    usage: Usage
    requests: int
    final_text: str = ""
    error: str | None = None


TurnResult = TurnFinished
"""What :meth:`Session.prompt` returns."""


def start_messages(history: tuple[Message, ...], user: Message) -> tuple[Message, ...]:
    """Append the user's message; a history that ends with a user message (an interrupted
    turn, or a compacted history) is merged into it so roles keep alternating."""
    if history and history[-1].role == "user":
        last = history[-1]
        marker = () if is_compacted_start(last) else (TextBlock(text=INTERRUPTED_MARKER),)
        merged = Message(role="user", content=(*last.content, *marker, *user.content))
        return (*history[:-1], merged)
    return (*history, user)


async def agent_loop(state: LoopState, env: TurnEnv) -> AsyncIterator[SessionUpdate | TurnFinished]:
    """Run one prompt to its end; see the module docstring."""
    turn = _Turn(env=env, state=state)
    try:
        async for event in turn.submit():
            yield event
        while turn.finished is None:
            if env.config.max_turns is not None and turn.state.requests >= env.config.max_turns:
                turn.finish("max_turn_requests", "max_turns")
                break
            async for event in turn.request():
                yield event
            if turn.response is None or turn.cut_short(turn.response):
                continue
            assistant = turn.commit(turn.response.message())
            uses = assistant.tool_uses()
            async for event in turn.run_tools(uses) if uses else turn.end(assistant):
                yield event
    except (asyncio.CancelledError, GeneratorExit):
        repaired = _repair(turn.state.messages, turn.results)
        env.commit(repaired)
        if repaired is not turn.state.messages:
            # Tell the user too: interrupted calls must not keep spinning in the editor.
            for block in repaired[-1].content:
                if isinstance(block, ToolResultBlock) and block.tool_use_id not in turn.results:
                    env.ctx.emit(
                        ToolCallUpdate(
                            tool_call_id=block.tool_use_id,
                            status="failed",
                            content=(ContentItem(content=TextContent(text=block.content)),),
                        )
                    )
        if env.aborted is not None:
            env.aborted(dataclasses.replace(turn.state, messages=repaired))
        raise
    finally:
        if turn.verification is not None:
            turn.verification.close()
    assert turn.finished is not None  # every way out of the loop sets it
    yield turn.finished


@dataclass(kw_only=True)
class _Turn:
    """The steps of one prompt. ``state`` is replaced, never mutated; ``finished`` is set by the
    step that ends the turn; ``response`` is the latest complete model response."""

    env: TurnEnv
    state: LoopState
    finished: TurnFinished | None = None
    response: AssistantResponse | None = None
    results: dict[str, ToolResultBlock] = dataclasses.field(default_factory=dict)
    announced: set[str] = dataclasses.field(default_factory=set)
    hooks: TurnHooks | None = None
    verification: TurnVerification | None = None
    stop_continues: int = 0
    recovered: bool = False

    def commit(self, message: Message) -> Message:
        self.state = _commit(self.env, self.state, message)
        return message

    def finish(
        self,
        stop: PromptStopReason,
        terminal: TerminalReason,
        *,
        text: str = "",
        error: str | None = None,
    ) -> None:
        self.finished = _finish(self.state, stop, terminal, final_text=text, error=error)

    async def submit(self) -> AsyncIterator[SessionUpdate]:
        """UserPromptSubmit hooks, then the prompt enters the history; verification starts."""
        env = self.env
        if env.hooks is not None:
            self.hooks = TurnHooks.around(env.hooks)
            self.env = env = dataclasses.replace(env, hooks=self.hooks)
            gate = await submit_prompt(
                self.hooks,
                self.state.messages,
                mode=env.permissions.mode,
                marker=INTERRUPTED_MARKER,
            )
            for chunk in note_chunks(gate.notes):
                yield chunk
            if gate.blocked is not None:
                # The prompt never reaches the model nor the history (Claude Code erases it).
                yield AgentMessageChunk(content=TextContent(text=gate.blocked))
                self.finish("end_turn", "hook_stopped", text=gate.blocked)
                return
            self.state = dataclasses.replace(self.state, messages=gate.messages)
        env.commit(self.state.messages)
        # Imported here, not at module level: server start-up does not need it.
        from lsp_agent.diagnostics.turn import TurnVerification

        self.verification = TurnVerification.start(
            diagnostics=env.ctx.diagnostics,
            config=env.config.verify,
            cwd=env.ctx.cwd,
            workspace=env.ctx.workspace,
        )

    async def request(self) -> AsyncIterator[SessionUpdate]:
        """One model request, streamed as chunks and tool-call announcements."""
        env, self.response = self.env, None
        tools = env.tools.specs()
        if env.context is not None:
            prepared = await env.context.prepare(
                system=env.system,
                tools=tools,
                messages=self.state.messages,
                max_tokens=self.state.max_tokens,
            )
            for update in self.adopt(prepared):
                yield update
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
                    yield AgentMessageChunk(content=TextContent(text=event.text))
                elif isinstance(event, ThinkingDelta):
                    yield AgentThoughtChunk(content=TextContent(text=event.thinking))
                elif isinstance(event, ToolUseStart):
                    announced.add(event.id)
                    yield ToolCall(
                        tool_call_id=event.id, title=event.name, kind=_kind(env, event.name)
                    )
                elif isinstance(event, ResponseDone):
                    response = event.response
        except ModelError as exc:
            if env.context is not None and not self.recovered and is_prompt_too_long(exc):
                async for update in self.recover(request, exc):
                    yield update
                return
            self.finish("end_turn", "model_error", error=str(exc))
            return
        if response is None:
            self.finish(
                "end_turn",
                "model_error",
                error="the model stream ended without a complete response",
            )
            return
        self.state = dataclasses.replace(
            self.state, requests=self.state.requests + 1, usage=self.state.usage + response.usage
        )
        if env.context is not None:
            env.context.observe(
                system=env.system, tools=tools, messages=request.messages, usage=response.usage
            )
        yield UsageUpdate(
            used=response.usage.context_tokens + response.usage.output_tokens,
            size=env.context.window if env.context is not None else 200_000,
        )
        self.announced = announced
        self.response = response

    def adopt(self, prepared: Prepared) -> list[SessionUpdate]:
        """Take the history the context engine prepared; the updates that tell the user."""
        updates: list[SessionUpdate] = []
        if prepared.messages != self.state.messages:
            self.state = dataclasses.replace(self.state, messages=prepared.messages)
            self.env.commit(prepared.messages)
        if prepared.boundary is not None and self.env.context is not None:
            updates.append(compacted_update(prepared.boundary, prepared.summary))
            # The meter drops at once (an estimate until the next response's usage).
            updates.append(
                UsageUpdate(used=prepared.boundary.tokens_after, size=self.env.context.window)
            )
        if prepared.notice is not None:
            updates.append(
                AgentMessageChunk(content=TextContent(text=f"\n\n{prepared.notice}\n\n"))
            )
        return updates

    async def recover(self, request: ModelRequest, exc: ModelError) -> AsyncIterator[SessionUpdate]:
        """ "Prompt is too long": compact once (clearing first) and let the loop retry; if that
        fails the turn ends with a clear error and the history stays as it was."""
        assert self.env.context is not None
        self.recovered = True
        try:
            prepared = await self.env.context.recover(
                system=request.system,
                tools=request.tools,
                messages=self.state.messages,
                max_tokens=self.state.max_tokens,
            )
        except CompactionError as failure:
            self.finish(
                "end_turn",
                "context_window",
                error=f"{exc} -- and compacting the conversation failed: {failure}",
            )
            return
        for update in self.adopt(prepared):
            yield update

    def cut_short(self, response: AssistantResponse) -> bool:
        """Handle output limits; True when the loop must go on (or the turn ended) without
        this response's tool calls. ``max_tokens``: one escalated retry, then bounded
        "continue" nudges; a full context window ends the turn (retrying cannot help)."""
        config = self.env.config
        if response.stop_reason == "model_context_window_exceeded":
            self.commit(_complete_blocks(response).message())
            self.finish(
                "max_tokens",
                "context_window",
                error="the conversation no longer fits the model's context window",
            )
            return True
        if response.stop_reason != "max_tokens":
            return False
        if self.state.max_tokens < config.escalated_max_tokens and not self.state.nudges:
            self.state = dataclasses.replace(self.state, max_tokens=config.escalated_max_tokens)
            return True
        self.commit(_complete_blocks(response).message())
        if self.state.nudges >= config.max_continue_nudges:
            self.finish("max_tokens", "max_tokens")
            return True
        self.state = dataclasses.replace(self.state, nudges=self.state.nudges + 1)
        self.commit(Message.user_text(CONTINUE_NUDGE))
        return True

    async def run_tools(self, uses: tuple[ToolUseBlock, ...]) -> AsyncIterator[SessionUpdate]:
        """Run the calls; their results (and the diagnostics of what they wrote) go back."""
        for use in uses:
            if use.id in self.announced:
                yield ToolCallUpdate(tool_call_id=use.id, raw_input=use.input)
            else:
                kind = _kind(self.env, use.name)
                yield ToolCall(tool_call_id=use.id, title=use.name, kind=kind, raw_input=use.input)
        async for update in _run_tools(uses, self.env, self.results):
            yield update
        notes: list[ContentBlock] = []
        if self.verification is not None:
            async for item in self.verification.after_batch():
                if isinstance(item, str):
                    notes.append(TextBlock(text=item))
                else:
                    yield item
        if self.env.instructions is not None:
            loaded = self.env.instructions(tuple((u.name, u.input) for u in uses))
            if loaded:
                notes.append(TextBlock(text=loaded))
        self.commit(Message(role="user", content=(*(self.results[u.id] for u in uses), *notes)))
        self.results = {}
        hook_stop = self.hooks.take_stop() if self.hooks is not None else None
        if hook_stop is not None:
            yield AgentMessageChunk(content=TextContent(text=hook_stop))
            self.finish("end_turn", "hook_stopped", text=hook_stop)

    async def end(self, assistant: Message) -> AsyncIterator[SessionUpdate]:
        """The model ended its turn: finish, unless verification or a Stop hook sends it on."""
        stop_reason = self.response.stop_reason if self.response is not None else None
        if stop_reason == "pause_turn":
            return
        if stop_reason == "refusal":
            self.finish("refusal", "refusal", text=assistant.text())
            return
        if self.verification is not None:
            nudge: str | None = None
            # In "fix" mode a turn that leaves new errors gets a bounded nudge.
            async for item in self.verification.at_end():
                if isinstance(item, str):
                    nudge = item
                else:
                    yield item
            if nudge is not None:
                self.commit(Message.user_text(nudge))
                return
        if self.hooks is not None:
            gate = await check_stop(
                self.hooks, continued=self.stop_continues, mode=self.env.permissions.mode
            )
            for chunk in note_chunks(gate.notes):
                yield chunk
            if gate.feedback is not None:
                self.stop_continues += 1
                self.commit(Message.user_text(gate.feedback))
                return
        self.finish("end_turn", "completed", text=assistant.text())


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


async def _run_tools(
    uses: tuple[ToolUseBlock, ...], env: TurnEnv, results: dict[str, ToolResultBlock]
) -> AsyncIterator[SessionUpdate]:
    """Run the tool calls while yielding the updates they emit (progress, status)."""
    queue: asyncio.Queue[SessionUpdate] = asyncio.Queue()
    pumped = dataclasses.replace(
        env.executor, ctx=dataclasses.replace(env.ctx, emit=queue.put_nowait)
    )
    task = asyncio.ensure_future(execute_tool_uses(uses, env=pumped, results=results))
    try:
        while not task.done() or not queue.empty():
            getter = asyncio.ensure_future(queue.get())
            try:
                await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                got = getter.done() and not getter.cancelled()
                if not got:
                    # cancel() only requests it: the getter is not "cancelled" until it runs.
                    getter.cancel()
            if got:
                yield getter.result()
        task.result()
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def _commit(env: TurnEnv, state: LoopState, message: Message) -> LoopState:
    new = dataclasses.replace(state, messages=(*state.messages, message))
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


def _finish(
    state: LoopState,
    stop: PromptStopReason,
    terminal: TerminalReason,
    *,
    final_text: str = "",
    error: str | None = None,
) -> TurnFinished:
    return TurnFinished(
        stop_reason=stop,
        terminal=terminal,
        usage=state.usage,
        requests=state.requests,
        final_text=final_text,
        error=error,
    )


def dump_history(messages: tuple[Message, ...]) -> str:
    """The history as JSON text (for transcripts and debugging)."""
    return json.dumps([m.model_dump(mode="json") for m in messages], indent=1)
