"""The tool executor: validate → prepare → permission → run, for every tool_use of a turn.

Consecutive concurrency-safe calls run in parallel; any other call runs alone. Results are
returned in tool_use order. When a Bash call fails, the calls after it in the same message are
not run (they may depend on it) and get an error result saying so. Every tool_use gets exactly
one result, written into ``results`` as soon as it is known, so a cancelled turn can still
answer the ones that finished.
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pydantic

from lsp_agent.agent.events import (
    ContentItem,
    SessionUpdate,
    TextContent,
    ToolCall,
    ToolCallUpdate,
)
from lsp_agent.host import Host
from lsp_agent.model.types import ToolResultBlock, ToolUseBlock
from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.permissions.types import PermissionRequest, PermissionResponse
from lsp_agent.tools.base import Prepared, Tool, ToolContext, ToolError, ToolOutput
from lsp_agent.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

PROGRESS_TAIL_CHARS = 8000
"""How much of a running tool's output (characters) a progress update carries."""

INVALID_JSON_KEY = "__invalid_json__"
"""Key the model client uses for tool input that was not valid JSON."""


@dataclass(frozen=True, kw_only=True)
class ExecutorEnv:
    """What the executor needs from the session."""

    session_id: str
    tools: ToolRegistry
    permissions: PermissionEngine
    host: Host
    context: ToolContext
    emit: Callable[[SessionUpdate], None]
    headless: bool = False


def _error(block: ToolUseBlock, text: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=block.id, content=text, is_error=True)


def _batches(blocks: Sequence[ToolUseBlock], tools: ToolRegistry) -> list[list[ToolUseBlock]]:
    """Group consecutive concurrency-safe calls; every other call is a batch of its own."""
    batches: list[list[ToolUseBlock]] = []
    previous_safe = False
    for block in blocks:
        tool = tools.get(block.name)
        safe = tool is not None and tool.concurrency_safe
        if safe and previous_safe:
            batches[-1].append(block)
        else:
            batches.append([block])
        previous_safe = safe
    return batches


async def execute_tool_uses(
    blocks: Sequence[ToolUseBlock],
    *,
    env: ExecutorEnv,
    results: dict[str, ToolResultBlock],
) -> list[ToolResultBlock]:
    """Run ``blocks`` and return one result per block, in order (see module docstring)."""
    failed_bash: str | None = None
    for batch in _batches(blocks, env.tools):
        if failed_bash is not None:
            for block in batch:
                results[block.id] = _error(
                    block, f"Not run: an earlier Bash command in this turn failed ({failed_bash})."
                )
                env.emit(ToolCallUpdate(tool_call_id=block.id, status="failed"))
            continue
        ran: set[str] = set()
        outcomes = await asyncio.gather(*(_run_one(b, env=env, ran=ran) for b in batch))
        for block, result in zip(batch, outcomes, strict=True):
            results[block.id] = result
            if block.name == "Bash" and result.is_error and block.id in ran:
                failed_bash = block.id
    return [results[b.id] for b in blocks]


async def _run_one(block: ToolUseBlock, *, env: ExecutorEnv, ran: set[str]) -> ToolResultBlock:
    """Run one call; adds its id to ``ran`` once the tool itself was started."""
    tool = env.tools.get(block.name)
    if tool is None:
        env.emit(ToolCallUpdate(tool_call_id=block.id, status="failed"))
        return _error(
            block,
            f"No such tool: {block.name!r}. Available tools: {', '.join(env.tools.names())}.",
        )
    if INVALID_JSON_KEY in block.input:
        env.emit(ToolCallUpdate(tool_call_id=block.id, status="failed"))
        return _error(block, f"The input of this {block.name} call was not valid JSON.")
    try:
        inp = tool.parse(block.input)
    except pydantic.ValidationError as exc:
        env.emit(ToolCallUpdate(tool_call_id=block.id, status="failed"))
        return _error(block, f"Invalid input for {tool.name}: {_validation_text(exc)}")
    try:
        prepared = await tool.prepare(inp, env.context)
    except ToolError as exc:
        env.emit(ToolCallUpdate(tool_call_id=block.id, status="failed"))
        return _error(block, str(exc))
    env.emit(
        ToolCallUpdate(
            tool_call_id=block.id,
            title=prepared.title,
            content=prepared.content or None,
            locations=prepared.locations or None,
        )
    )
    verdict = await _authorize(block, tool, prepared, env=env)
    if isinstance(verdict, str):
        env.emit(ToolCallUpdate(tool_call_id=block.id, status="failed"))
        return _error(block, verdict)
    prepared, note = _with_user_edits(prepared, verdict)
    env.emit(ToolCallUpdate(tool_call_id=block.id, status="in_progress"))
    ran.add(block.id)
    output = await _call(tool, inp, prepared, block, env=env)
    if note and not output.is_error:
        output = dataclasses.replace(output, text=f"{output.text}\n\n{note}")
    env.emit(
        ToolCallUpdate(
            tool_call_id=block.id,
            status="failed" if output.is_error else "completed",
            content=output.content or (ContentItem(content=TextContent(text=output.text)),),
            raw_output=output.raw_output,
        )
    )
    return ToolResultBlock(tool_use_id=block.id, content=output.text, is_error=output.is_error)


async def _call(
    tool: Tool[Any], inp: Any, prepared: Prepared, block: ToolUseBlock, *, env: ExecutorEnv
) -> ToolOutput:
    shown: list[str] = []

    def progress(text: str) -> None:
        # ACP replaces a tool call's content on update: send the output so far (its tail).
        shown.append(text)
        tail = "".join(shown)[-PROGRESS_TAIL_CHARS:]
        shown[:] = [tail]
        env.emit(
            ToolCallUpdate(
                tool_call_id=block.id, content=(ContentItem(content=TextContent(text=tail)),)
            )
        )

    ctx = dataclasses.replace(env.context, progress=progress)
    try:
        if tool.reads_disk:
            await ctx.workspace.before_disk_read()
        try:
            return await tool.call(inp, prepared, ctx)
        finally:
            if tool.writes_disk:
                await ctx.workspace.after_disk_write()
    except ToolError as exc:
        return ToolOutput(text=str(exc), is_error=True)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a tool bug must not end the session
        log.exception("tool %s failed", tool.name)
        return ToolOutput(
            text=f"{tool.name} failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True
        )


def _with_user_edits(
    prepared: Prepared, answer: PermissionResponse | None
) -> tuple[Prepared, str | None]:
    """Apply the user's own version of the proposed files (per-hunk review, edited proposal)
    and a note for the model saying what the user changed; feedback text is passed on too."""
    if answer is None:
        return prepared, None
    notes: list[str] = []
    edited = answer.edited_text or {}
    changes = []
    for change in prepared.changes:
        mine = edited.get(str(change.path))
        if mine is None or mine == change.new_text:
            changes.append(change)
            continue
        changes.append(dataclasses.replace(change, new_text=mine))
        diff = "".join(
            difflib.unified_diff(
                change.new_text.splitlines(keepends=True),
                mine.splitlines(keepends=True),
                fromfile=f"{change.path} (your proposal)",
                tofile=f"{change.path} (what the user accepted)",
            )
        )
        notes.append(
            f"The user changed your proposal for {change.path} before accepting it; the file "
            f"now holds their version. Differences from your proposal:\n{diff}"
        )
    if answer.feedback:
        notes.append(f"The user said: {answer.feedback}")
    if not notes:
        return prepared, None
    return dataclasses.replace(prepared, changes=tuple(changes)), "\n".join(notes)


async def _authorize(
    block: ToolUseBlock, tool: Tool[Any], prepared: Prepared, *, env: ExecutorEnv
) -> str | PermissionResponse | None:
    """The refusal text for the model, or the user's approval (None: allowed by policy)."""
    decision = env.permissions.decide(
        tool=tool.name,
        read_only=tool.read_only,
        kind=tool.kind,
        paths=prepared.paths,
        raw_input=block.input,
    )
    if decision.behavior == "allow":
        return None
    if decision.behavior == "deny":
        return f"Permission denied: {decision.reason}."
    if env.headless:
        return (
            f"Permission denied: {tool.name} needs approval ({decision.reason}) and this is a "
            "non-interactive run. Allow it with --allowedTools or --permission-mode."
        )
    request = PermissionRequest(
        tool_call=ToolCall(
            tool_call_id=block.id,
            title=prepared.title,
            kind=tool.kind,
            status="pending",
            content=prepared.content,
            locations=prepared.locations,
            raw_input=block.input,
        ),
        reason=decision.reason,
    )
    answer = await env.host.request_permission(request)
    kind = answer.kind(request.options)
    if kind in ("allow_once", "allow_always"):
        if kind == "allow_always":
            env.permissions.remember(tool=tool.name, raw_input=block.input, allow=True)
        return answer
    if kind == "reject_always":
        env.permissions.remember(tool=tool.name, raw_input=block.input, allow=False)
    if kind == "cancelled":
        return "The permission prompt was cancelled; the tool did not run."
    text = "The user rejected this tool call; it did not run."
    if answer.feedback:
        text += f" The user said: {answer.feedback}"
    return text


def _validation_text(exc: pydantic.ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "input"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)
