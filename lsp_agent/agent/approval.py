"""Whether one tool call may run, and what the user's answer changes: deny and ask rules and
the path sandbox (:class:`~lsp_agent.permissions.engine.PermissionEngine`) combined with the
PreToolUse hooks' answer, the permission prompt (or the door's unattended refusal), "always"
answers remembered, and the user's own version of a proposed edit applied to the call.

The executor (:mod:`.executor`) calls :func:`prepare_behind_rules` before a call is prepared
and :func:`authorize` after; a refused call gets a
:class:`~lsp_agent.protocol.permissions.Refusal`, never an exception.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsp_agent.agent.env import ExecutorEnv
from lsp_agent.hooks.runner import HookOutcome
from lsp_agent.model.types import ToolResultBlock, ToolUseBlock
from lsp_agent.permissions.engine import Decision
from lsp_agent.permissions.suggestions import rule_label
from lsp_agent.protocol.events import DiffItem, ToolCall
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse, Refusal
from lsp_agent.tools.base import Prepared, Tool, ToolError
from lsp_agent.tools.diffing import unified_diff

log = logging.getLogger(__name__)


def _combine_with_hook(decision: Decision, hook: HookOutcome | None) -> Decision:
    """A hook's "ask" turns an allow into an ask; its "allow" only skips the default ask, never
    a deny, an ask rule, the sandbox or an unanalysable command (``Decision.hard``)."""
    if hook is None or hook.permission is None or decision.behavior == "deny":
        return decision
    why = hook.permission_reason or "a PreToolUse hook"
    if hook.permission == "ask" and decision.behavior == "allow":
        return Decision(behavior="ask", reason=f"a PreToolUse hook asks: {why}", source="hook")
    if hook.permission == "allow" and decision.behavior == "ask" and not decision.hard:
        return Decision(
            behavior="allow", reason=f"allowed by a PreToolUse hook: {why}", source="hook"
        )
    return decision


async def prepare_behind_rules(
    block: ToolUseBlock,
    tool: Tool[Any, Any],
    inp: Any,
    *,
    env: ExecutorEnv,
    raw_input: dict[str, Any],
    hook: HookOutcome | None,
) -> Prepared[Any] | ToolResultBlock | Refusal:
    """``prepare`` the call, with deny/ask rules and the path sandbox decided first on the
    paths the input names (:meth:`Tool.target_paths`): a denied path is refused before any
    check could reveal whether it exists, is a file or was read; when the rules ask and
    ``prepare`` fails, the user is asked before the model learns why it failed."""
    targets = tool.target_paths(inp, env.ctx)
    early: Decision | None = None
    if targets is not None:
        early = _decision(
            tool, targets, env=env, raw_input=raw_input, hook=hook, resolved=tool.resolved_paths
        )
        if early.behavior == "deny":
            return Refusal(kind="denied", reason=early.reason, rule=early.rule, source=early.source)
    try:
        return await tool.prepare(inp, env.ctx)
    except ToolError as exc:
        if early is not None and early.behavior == "ask":
            assert targets is not None
            shown = Prepared(title=tool.title(inp), paths=targets)
            verdict = await _ask(block, tool, shown, early, env=env, raw_input=raw_input)
            if isinstance(verdict, Refusal):
                return verdict
        return ToolResultBlock(tool_use_id=block.id, content=str(exc), is_error=True)


def _decision(
    tool: Tool[Any, Any],
    paths: Sequence[Path],
    *,
    env: ExecutorEnv,
    raw_input: dict[str, Any],
    hook: HookOutcome | None,
    resolved: bool = False,
) -> Decision:
    """The engine's decision on ``paths`` (``resolved``: as ``prepare`` just resolved them),
    combined with the PreToolUse hooks' answer."""
    return _combine_with_hook(
        env.permissions.decide(
            tool=tool.name,
            read_only=tool.read_only,
            kind=tool.kind,
            paths=paths,
            raw_input=raw_input,
            resolved=resolved,
        ),
        hook,
    )


async def authorize(
    block: ToolUseBlock,
    tool: Tool[Any, Any],
    prepared: Prepared[Any],
    *,
    env: ExecutorEnv,
    raw_input: dict[str, Any] | None = None,
    hook: HookOutcome | None = None,
) -> Refusal | PermissionResponse | None:
    """The refusal, or the user's approval (None: allowed by policy)."""
    raw_input = block.input if raw_input is None else raw_input
    decision = _decision(
        tool,
        prepared.paths,
        env=env,
        raw_input=raw_input,
        hook=hook,
        resolved=tool.resolved_paths,
    )
    if prepared.needs_approval is not None and decision.behavior == "allow":
        decision = Decision(
            behavior="ask",
            reason=prepared.needs_approval,
            source="sandbox",
            hard=True,
            can_allow_always=False,
        )
    if log.isEnabledFor(logging.INFO):
        log.info(
            "permission %s for %s (%s; %s)",
            decision.behavior,
            tool.name,
            decision.reason,
            decision.decided_by(),
        )
    if decision.behavior == "allow":
        return None
    if decision.behavior == "deny":
        return Refusal(
            kind="denied", reason=decision.reason, rule=decision.rule, source=decision.source
        )
    return await _ask(block, tool, prepared, decision, env=env, raw_input=raw_input)


async def _ask(
    block: ToolUseBlock,
    tool: Tool[Any, Any],
    prepared: Prepared[Any],
    decision: Decision,
    *,
    env: ExecutorEnv,
    raw_input: dict[str, Any],
) -> Refusal | PermissionResponse:
    """Ask the user about one call (or give the door's unattended refusal); remembers
    "always" answers. The refusal, or the approving answer."""
    request = PermissionRequest(
        session_id=env.ctx.session_id,
        tool_call=ToolCall(
            tool_call_id=block.id,
            title=prepared.title,
            kind=tool.kind,
            status="pending",
            content=prepared.content,
            locations=prepared.locations,
            raw_input=raw_input,
        ),
        options=decision.prompt_options(),
        reason=decision.reason,
        rule=decision.rule,
        source=decision.source,
        suggested_rules=decision.suggestions,
        suggested_rule_labels=tuple(rule_label(r, env.ctx.cwd) for r in decision.suggestions),
    )
    refusal = env.unattended(tool.name, request) if env.unattended is not None else None
    if refusal is not None:
        return refusal
    if env.hooks is not None:
        env.hooks.notify(message=f"Claude needs your permission to use {tool.name}")
    answer = await env.ctx.host.request_permission(request)
    kind = answer.kind(request.options)
    remember = dict(
        tool=tool.name,
        raw_input=raw_input,
        scope=answer.scope or "session",
        rules=decision.suggestions or None,
        paths=prepared.paths,
    )
    if kind in ("allow_once", "allow_always"):
        if kind == "allow_always":
            env.permissions.remember(allow=True, **remember)  # type: ignore[arg-type]
        return answer
    if kind == "reject_always":
        env.permissions.remember(allow=False, **remember)  # type: ignore[arg-type]
    if kind == "cancelled":
        return Refusal(
            kind="cancelled",
            reason=answer.feedback or "",
            rule=decision.rule,
            source=decision.source,
        )
    return Refusal(
        kind="rejected", reason=answer.feedback or "", rule=decision.rule, source=decision.source
    )


def with_user_edits(
    prepared: Prepared[Any], answer: PermissionResponse | None
) -> tuple[Prepared[Any], str | None]:
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
    # The card shows what is applied (the accepted hunks), not the proposal.
    accepted = {str(c.path): c.new_text for c in changes}
    content = tuple(
        _accepted_diff(item, accepted[item.path])
        if isinstance(item, DiffItem) and item.path in accepted
        else item
        for item in prepared.content
    )
    return (
        dataclasses.replace(prepared, changes=tuple(changes), content=content),
        "\n".join(notes),
    )


def _accepted_diff(item: DiffItem, new_text: str) -> DiffItem:
    """``item`` showing ``new_text`` (the text the user accepted) instead of the proposal."""
    if new_text == item.new_text:
        return item
    header = (item.unified_diff or "").split("\n", 1)[0]
    label = header.removeprefix("--- ") if header.startswith("--- ") else Path(item.path).name
    if label == "/dev/null":
        label = Path(item.path).name
    return item.model_copy(
        update={
            "new_text": new_text,
            "unified_diff": unified_diff(item.old_text, new_text, label=label),
        }
    )
