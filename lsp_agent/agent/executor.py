"""The tool executor: validate → prepare → PreToolUse hooks → permission → run → PostToolUse
hooks, for every tool_use of a turn.

Consecutive concurrency-safe calls run in parallel; any other call runs alone. Results are
returned in tool_use order. When a call of a tool that declares
``Tool.failure_cancels_siblings`` (Bash) fails, the calls after it in the same message are not
run (they may depend on it) and get an error result saying so. Every tool_use gets exactly one
result, written into ``results`` as soon as it is known, so a cancelled turn can still answer
the ones that finished. A call refused before it ran
(:class:`~lsp_agent.protocol.permissions.Refusal`) gets the refusal rendered by
:func:`refusal_text` as its result, and the refusal itself as ``rawOutput.refusal`` of its
final ``tool_call_update``. Whether a call may run, and what the user's answer to a prompt
changes, is decided in :mod:`.approval`; what the executor reads is
:class:`~lsp_agent.agent.env.ExecutorEnv`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pydantic

from lsp_agent.agent.approval import authorize, prepare_behind_rules, with_user_edits
from lsp_agent.agent.env import ExecutorEnv, Unattended
from lsp_agent.agent.frozen import evolve
from lsp_agent.context.budgets import budget_for, fit, head_tail, result_path, spill
from lsp_agent.hooks.runner import HookOutcome, HookRunner
from lsp_agent.model.types import ToolResultBlock, ToolUseBlock
from lsp_agent.protocol.events import ContentItem, TextContent, ToolCallUpdate
from lsp_agent.protocol.permissions import Refusal
from lsp_agent.tools.base import Prepared, Tool, ToolError, ToolOutput
from lsp_agent.tools.registry import ToolRegistry

__all__ = [
    "INVALID_JSON_KEY",
    "PROGRESS_TAIL_CHARS",
    "ExecutorEnv",
    "Unattended",
    "execute_tool_uses",
    "refusal_text",
]

log = logging.getLogger(__name__)

PROGRESS_TAIL_CHARS = 8000
"""How much of a running tool's output (characters) a progress update carries."""

INVALID_JSON_KEY = "__invalid_json__"
"""Key the model client uses for tool input that was not valid JSON."""


def refusal_text(refusal: Refusal) -> str:
    """The tool_result text of a refused call (the one place refusals are worded)."""
    if refusal.kind == "denied":
        return f"Permission denied: {refusal.reason}."
    if refusal.kind == "cancelled":
        text = "The permission prompt was cancelled; the tool did not run."
        return f"{text} {refusal.reason}" if refusal.reason else text
    if refusal.kind == "hook_blocked":
        return f"Blocked by a PreToolUse hook: {refusal.reason}"
    text = "The user rejected this tool call; it did not run."
    return f"{text} The user said: {refusal.reason}" if refusal.reason else text


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
    failed: ToolUseBlock | None = None
    for batch in _batches(blocks, env.tools):
        if failed is not None:
            for block in batch:
                results[block.id] = _error(
                    block,
                    f"Not run: an earlier {failed.name} command in this turn failed ({failed.id}).",
                )
                _report_failure(block, results[block.id], env=env)
            continue
        ran: set[str] = set()
        if len(batch) == 1:  # a lone call needs no task of its own (one loop step fewer)
            outcomes = [await _run_one(batch[0], env=env, ran=ran)]
        else:
            outcomes = await asyncio.gather(*(_run_one(b, env=env, ran=ran) for b in batch))
        for block, result in zip(batch, outcomes, strict=True):
            results[block.id] = result
            tool = env.tools.get(block.name)
            cancels = tool is not None and tool.failure_cancels_siblings
            if cancels and result.is_error and block.id in ran:
                failed = block
    return [results[b.id] for b in blocks]


async def _run_one(block: ToolUseBlock, *, env: ExecutorEnv, ran: set[str]) -> ToolResultBlock:
    """Run one call; a call refused before it ran is reported to the user with its reason."""
    refusal: Refusal | None = None
    try:
        outcome = await _attempt(block, env=env, ran=ran)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a crash in prepare or a hook must not end the turn
        log.exception("%s failed before it ran", block.name)
        outcome = _error(block, f"{block.name} failed: {type(exc).__name__}: {exc}")
    if isinstance(outcome, Refusal):
        refusal, outcome = outcome, _error(block, refusal_text(outcome))
    if block.id not in ran:
        _report_failure(block, outcome, env=env, refusal=refusal)
    return outcome


def _report_failure(
    block: ToolUseBlock,
    result: ToolResultBlock,
    *,
    env: ExecutorEnv,
    refusal: Refusal | None = None,
) -> None:
    text = ContentItem(content=TextContent(text=result.content))
    env.ctx.emit(
        ToolCallUpdate(
            tool_call_id=block.id,
            status="failed",
            content=(text,),
            raw_output={"refusal": refusal.to_wire()} if refusal is not None else None,
        )
    )


async def _attempt(
    block: ToolUseBlock, *, env: ExecutorEnv, ran: set[str]
) -> ToolResultBlock | Refusal:
    """Validate, prepare, authorize and run one call; adds its id to ``ran`` once the tool
    itself was started. A refused call gives its :class:`Refusal`."""
    tool = env.tools.get(block.name)
    if tool is None:
        return _error(
            block,
            f"No such tool: {block.name!r}. Available tools: "
            f"{', '.join(env.tools.names()) or 'none (every tool is off in this session)'}.",
        )
    if INVALID_JSON_KEY in block.input:
        return _error(block, f"The input of this {block.name} call was not valid JSON.")
    try:
        inp = tool.parse(block.input)
    except pydantic.ValidationError as exc:
        return _error(block, f"Invalid input for {tool.name}: {_validation_text(exc)}")
    raw_input = block.input
    pre: HookOutcome | None = None
    if env.hooks is not None:
        pre = await env.hooks.pre_tool_use(
            tool_name=tool.name,
            tool_input=raw_input,
            tool_use_id=block.id,
            permission_mode=env.permissions.mode,
        )
        _show_hook_notes(block, pre, env=env)
        if pre.block or pre.stop:
            why = pre.reason or pre.stop_reason or "a PreToolUse hook blocked this call"
            return Refusal(kind="hook_blocked", reason=why, source="hook")
        if pre.updated_input is not None:
            try:
                inp = tool.parse(pre.updated_input)
            except pydantic.ValidationError as exc:
                return _error(
                    block,
                    f"A PreToolUse hook rewrote the input into something invalid: "
                    f"{_validation_text(exc)}",
                )
            raw_input = pre.updated_input
    prepared = await prepare_behind_rules(block, tool, inp, env=env, raw_input=raw_input, hook=pre)
    if not isinstance(prepared, Prepared):
        return prepared
    env.ctx.emit(
        ToolCallUpdate(
            tool_call_id=block.id,
            title=prepared.title,
            content=prepared.content or None,
            locations=prepared.locations or None,
        )
    )
    verdict = await authorize(block, tool, prepared, env=env, raw_input=raw_input, hook=pre)
    if isinstance(verdict, Refusal):
        return verdict
    prepared, note = with_user_edits(prepared, verdict)
    env.ctx.emit(ToolCallUpdate(tool_call_id=block.id, status="in_progress"))
    ran.add(block.id)
    output = _within_budget(tool, block, await _call(tool, inp, prepared, block, env=env), env)
    _note_read(tool, block, prepared, output, env)
    if note and not output.is_error:
        output = dataclasses.replace(output, text=f"{output.text}\n\n{note}")
    if pre is not None and pre.context:
        output = dataclasses.replace(
            output, text=f"{output.text}\n\nPreToolUse hook context: " + "\n".join(pre.context)
        )
    if env.hooks is not None:
        output = await _post_hooks(block, tool, raw_input, output, env=env, hooks=env.hooks)
    env.ctx.emit(
        ToolCallUpdate(
            tool_call_id=block.id,
            status="failed" if output.is_error else "completed",
            content=output.content or (ContentItem(content=TextContent(text=output.text)),),
            raw_output=output.raw_output,
        )
    )
    return ToolResultBlock(
        tool_use_id=block.id, content=output.text, is_error=output.is_error, images=output.images
    )


async def _call(
    tool: Tool[Any, Any],
    inp: Any,
    prepared: Prepared[Any],
    block: ToolUseBlock,
    *,
    env: ExecutorEnv,
) -> ToolOutput:
    shown: list[str] = []

    def progress(text: str) -> None:
        # ACP replaces a tool call's content on update: send the output so far (its tail).
        shown.append(text)
        tail = "".join(shown)[-PROGRESS_TAIL_CHARS:]
        shown[:] = [tail]
        env.ctx.emit(
            ToolCallUpdate(
                tool_call_id=block.id, content=(ContentItem(content=TextContent(text=tail)),)
            )
        )

    ctx = evolve(env.ctx, progress=progress)
    # A tool that may write anywhere is bracketed by checkpoint snapshots, so rewind covers
    # what it changed (edits through the workspace are observed there).
    checkpoints = ctx.workspace.checkpoints if tool.writes_disk and not tool.read_only else None
    try:
        if tool.reads_disk:
            unsaved = await ctx.workspace.before_disk_read()
            if unsaved:
                return _unsaved_output(tool, unsaved)
        if checkpoints is not None:
            await checkpoints.before_shell()
        try:
            return await tool.call(inp, prepared, ctx)
        finally:
            if checkpoints is not None:
                await checkpoints.after_shell()
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


def _unsaved_output(tool: Tool[Any, Any], unsaved: dict[Path, str]) -> ToolOutput:
    """The result of a disk-reading call that was not run because edited buffers could not be
    saved: the disk does not hold the edits, so running it would act on stale files."""
    listed = "\n".join(f"- {path}: {why}" for path, why in sorted(unsaved.items()))
    text = (
        f"{tool.name} was not run: your edits to these files are in the editor but could not be "
        f"saved to disk, so the disk still holds the old text:\n{listed}\n"
        "Tell the user (they can save the files themselves or fix the problem); do not assume "
        "the disk holds your edits."
    )
    log.warning("%s not run: unsaved edits %s", tool.name, sorted(unsaved))
    return ToolOutput(text=text, is_error=True)


def _note_read(
    tool: Tool[Any, Any],
    block: ToolUseBlock,
    prepared: Prepared[Any],
    output: ToolOutput,
    env: ExecutorEnv,
) -> None:
    """Remember what a successful ``Read`` saw, so clearing can tell whether the file changed
    since."""
    if tool.name == "Read" and not output.is_error and prepared.paths:
        env.ctx.read_state.note_call(block.id, prepared.paths[0])


def _within_budget(
    tool: Tool[Any, Any], block: ToolUseBlock, output: ToolOutput, env: ExecutorEnv
) -> ToolOutput:
    """Apply the tool-result budget: oversized text is saved under the session's folder and
    the model gets a head-and-tail preview with the file's path."""
    budget = budget_for(tool.name, os.environ)
    if budget is None or len(output.text) <= budget:
        return output
    if env.results_dir is None:
        return dataclasses.replace(output, text=head_tail(output.text, budget))
    path = result_path(env.results_dir, block.id)
    fitted = fit(output.text, budget=budget, is_error=output.is_error, path=path)
    try:
        spill(path, output.text)
    except OSError as exc:
        log.warning("cannot save the output of %s to %s: %s", tool.name, path, exc)
        return dataclasses.replace(output, text=head_tail(output.text, budget))
    return dataclasses.replace(output, text=fitted.text)


def _show_hook_notes(block: ToolUseBlock, outcome: HookOutcome, *, env: ExecutorEnv) -> None:
    """Hook messages and errors are for the user: shown on the tool call they concern."""
    notes = [*outcome.messages, *outcome.errors]
    if notes:
        env.ctx.emit(
            ToolCallUpdate(
                tool_call_id=block.id,
                content=tuple(ContentItem(content=TextContent(text=f"[hook] {n}")) for n in notes),
            )
        )


async def _post_hooks(
    block: ToolUseBlock,
    tool: Tool[Any, Any],
    raw_input: dict[str, Any],
    output: ToolOutput,
    *,
    env: ExecutorEnv,
    hooks: HookRunner,
) -> ToolOutput:
    """Run PostToolUse hooks; their blocking reason and context go to the model."""
    response: dict[str, Any] = {"output": output.text, "is_error": output.is_error}
    if output.raw_output:
        response.update(output.raw_output)
    post = await hooks.post_tool_use(
        tool_name=tool.name,
        tool_input=raw_input,
        tool_response=response,
        tool_use_id=block.id,
        permission_mode=env.permissions.mode,
    )
    _show_hook_notes(block, post, env=env)
    extra = []
    if post.block and post.reason:
        extra.append(f"PostToolUse hook feedback: {post.reason}")
    if post.context:
        extra.append("PostToolUse hook context: " + "\n".join(post.context))
    if not extra:
        return output
    return dataclasses.replace(output, text="\n\n".join([output.text, *extra]))


def _validation_text(exc: pydantic.ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "input"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)
