"""Compaction, the pure part: when to compact, what to ask for, and the history that results.

The model writes a structured handoff summary (:func:`summary_instruction`); everything else
in the new history is built here deterministically, so what matters most never depends on
the summary's quality:

1. the summary (goal, the user's instructions, decisions, files, errors, pending work, current
   step), headed by :data:`SUMMARY_HEADER` so it is recognisable later;
2. a working-set block built from server state by the caller (memory files re-read from disk,
   edited files with their versions, pending edits, diagnostics, todos), never from the summary;
3. the user's own messages, verbatim (:func:`kept_prompts`): every instruction the user typed
   survives word for word, newest first when they do not all fit.

Thresholds (:func:`auto_threshold`) follow Claude Code's docs: by default compaction triggers
when the next request would not fit the window, minus the request's ``max_tokens`` and a reserve;
``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` can only lower that point, ``DISABLE_AUTO_COMPACT`` keeps
``/compact`` but turns the automatic trigger off, ``DISABLE_COMPACT`` turns both off.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from lsp_agent.context.tokens import estimate_message, estimate_text
from lsp_agent.model.types import Message, TextBlock, ToolResultBlock

Trigger = Literal["auto", "manual", "reactive"]
"""What started a compaction: the threshold, ``/compact``, or a "prompt is too long" answer.
Hooks see ``reactive`` as ``auto`` (Claude Code's PreCompact matchers are manual/auto)."""

RESERVE_FRACTION = 0.05
"""Head room kept below the window besides the request's ``max_tokens`` (fraction of window)."""

PROMPTS_FRACTION = 0.1
"""Room for the user's verbatim messages in the compacted history (fraction of the window);
the newest message is always kept, whatever its size."""

SUMMARY_MAX_TOKENS = 8192
"""``max_tokens`` of the summary request (lowered to the model's output limit)."""

MAX_FAILED_IN_A_ROW = 3
"""Automatic compactions that do not get under the threshold before auto-compaction stops."""

SUMMARY_HEADER = "<compact-summary>"
"""First line of the message that opens a compacted history."""

SUMMARY_FOOTER = "</compact-summary>"

MID_TURN_NOTE = (
    "Continue from where the conversation left off: the current step, or the user's newest "
    "message above."
)


def auto_threshold(
    *, window: int, max_tokens: int, environ: Mapping[str, str] | None = None
) -> int:
    """The prompt size (tokens) above which a request triggers automatic compaction:
    ``window - max_tokens - reserve`` (reserve = :data:`RESERVE_FRACTION` of the window),
    lowered to ``window * pct / 100`` by ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=pct`` (1 to 100;
    other values are ignored; it can never raise the threshold). At least 1."""
    threshold = window - max_tokens - int(window * RESERVE_FRACTION)
    raw = (environ or {}).get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "").strip()
    try:
        pct = float(raw) if raw else None
    except ValueError:
        pct = None
    if pct is not None and 0 < pct <= 100:
        threshold = min(threshold, int(window * pct / 100))
    return max(1, threshold)


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True, kw_only=True)
class CompactPolicy:
    """Whether compaction may run: ``auto`` (the threshold trigger, settings ``autoCompact``)
    and ``manual`` (``/compact`` and the reactive recovery)."""

    auto: bool = True
    manual: bool = True

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None, *, auto_setting: bool | None = None
    ) -> CompactPolicy:
        """The policy from settings ``autoCompact`` (``None``: not set) and the environment
        (``DISABLE_COMPACT``, ``DISABLE_AUTO_COMPACT``; truthy values 1/true/yes/on)."""
        env = environ or {}
        if _truthy(env.get("DISABLE_COMPACT")):
            return cls(auto=False, manual=False)
        auto = auto_setting is not False and not _truthy(env.get("DISABLE_AUTO_COMPACT"))
        return cls(auto=auto, manual=True)


def summary_instruction(focus: str = "") -> str:
    """The instruction appended to the history to ask for the handoff summary.

    ``focus`` (``/compact <focus>``, or the memory files' "Compact Instructions") is added as
    what the summary must concentrate on.
    """
    text = (
        "CONTEXT CHECKPOINT. The conversation is about to be compacted: everything above will be "
        "replaced by the summary you write now. Do not call any tool. Write a handoff summary "
        "for yourself, precise enough to continue the work without the conversation, with these "
        "sections:\n"
        "1. Goal: what the user wants overall.\n"
        "2. User instructions and constraints: every explicit instruction, preference and "
        "constraint the user gave, quoted word for word.\n"
        "3. Decisions: what was decided and why.\n"
        "4. Files: every file read, created or changed, with what matters about each.\n"
        "5. Errors and fixes: problems met and how they were solved (exact messages where they "
        "matter).\n"
        "6. Pending work: what remains to be done.\n"
        "7. Current step: exactly what you were doing last and the next action.\n"
        "Be concrete: paths, function names, commands, numbers. No preamble."
    )
    if focus.strip():
        text += f"\n\nFocus the summary on: {focus.strip()}"
    return text


def with_instruction(messages: Sequence[Message], instruction: str) -> tuple[Message, ...]:
    """The summary request's messages: the history (the cached prefix) with ``instruction``
    appended as the last user message, or added to the last message when that is a user one
    (roles must alternate)."""
    note = TextBlock(text=instruction)
    if messages and messages[-1].role == "user":
        last = messages[-1]
        return (*messages[:-1], Message(role="user", content=(*last.content, note)))
    return (*messages, Message(role="user", content=(note,)))


def kept_prompts(prompts: Sequence[str], *, budget: int) -> tuple[tuple[str, ...], int]:
    """The user's messages to keep verbatim: all of them when they fit ``budget`` tokens, else
    the newest that fit (the newest always), in their original order; and how many older
    ones were left out (the summary carries those)."""
    kept: list[str] = []
    used = 0
    for prompt in reversed(prompts):
        size = estimate_text(prompt)
        if kept and used + size > budget:
            break
        kept.append(prompt)
        used += size
    return tuple(reversed(kept)), len(prompts) - len(kept)


@dataclass(frozen=True, kw_only=True)
class Boundary:
    """The record of one compaction (Claude Code's ``compact_boundary``): its trigger and the
    prompt size before and after (tokens, estimates for ``after``)."""

    trigger: Trigger
    tokens_before: int
    tokens_after: int
    prompts_kept: int
    files: int


def compacted_history(
    *, summary: str, working_set: str, prompts: Sequence[str], omitted: int, mid_turn: bool
) -> tuple[Message, ...]:
    """The history that replaces the compacted one: a single user message.

    ``mid_turn``: compaction happened inside a turn (automatic or reactive), so the message
    ends by asking the model to go on with the current step or the user's newest message.
    """
    parts = [
        SUMMARY_HEADER,
        "This session continues an earlier conversation that was compacted to fit the context "
        "window. Your summary of it:",
        summary.strip(),
        SUMMARY_FOOTER,
    ]
    if working_set.strip():
        parts.append(working_set.strip())
    if prompts:
        head = "The user's messages so far, verbatim (newest last)"
        if omitted:
            head += f"; {omitted} older ones are covered by the summary"
        quoted = "\n".join(f"<user-message>\n{p}\n</user-message>" for p in prompts)
        parts.append(f"<user-messages>\n{head}:\n{quoted}\n</user-messages>")
    if mid_turn:
        parts.append(MID_TURN_NOTE)
    return (Message.user_text("\n\n".join(parts)),)


def is_compacted_start(message: Message) -> bool:
    """Whether ``message`` opens a compacted history (see :func:`compacted_history`; the
    memory start block may come before the summary)."""
    return message.role == "user" and any(
        isinstance(b, TextBlock) and b.text.startswith(SUMMARY_HEADER) for b in message.content[:2]
    )


def summary_problem(summary: str, *, tokens_before: int) -> str | None:
    """Why a summary must not replace the history (fail closed), or ``None`` when it may:
    empty, or not smaller than the history it replaces."""
    if not summary.strip():
        return "the model returned an empty summary"
    size = estimate_text(summary)
    if size >= tokens_before:
        return (
            f"the summary ({size} tokens) is not smaller than the history it would replace "
            f"({tokens_before} tokens)"
        )
    return None


def pairing_problems(messages: Sequence[Message]) -> list[str]:
    """Ways ``messages`` break the tool pairing rule (empty when it holds): every ``tool_use``
    of an assistant message is answered by exactly one ``tool_result`` in the next message,
    and every ``tool_result`` answers a ``tool_use`` of the message before it."""
    problems: list[str] = []
    for i, message in enumerate(messages):
        results = [b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)]
        if results:
            before = messages[i - 1] if i > 0 else None
            asked = {u.id for u in before.tool_uses()} if before is not None else set()
            for rid in results:
                if rid not in asked:
                    problems.append(f"message {i}: tool_result {rid} answers no tool_use")
            if len(results) != len(set(results)):
                problems.append(f"message {i}: a tool_use is answered twice")
        if message.role == "assistant" and message.tool_uses():
            after = messages[i + 1] if i + 1 < len(messages) else None
            answered = (
                {b.tool_use_id for b in after.content if isinstance(b, ToolResultBlock)}
                if after is not None
                else set()
            )
            for use in message.tool_uses():
                if after is not None and use.id not in answered:
                    problems.append(f"message {i}: tool_use {use.id} has no tool_result")
    return problems


OMITTED_NOTE = "[Earlier conversation omitted to fit the context window.]"


def drop_oldest(messages: Sequence[Message], count: int) -> tuple[Message, ...]:
    """``messages`` without at least ``count`` of the oldest, cut where pairing still holds
    (Codex drops the oldest items when even the summary request is too long).

    The cut is made before an assistant message at index >= ``count``, and a short user
    message (:data:`OMITTED_NOTE`) takes the place of what was dropped, so roles alternate and
    every kept ``tool_result`` still follows its ``tool_use``. When no assistant message is left
    to cut before, ``messages`` is returned unchanged.
    """
    for start in range(max(count, 1), len(messages)):
        if messages[start].role == "assistant":
            return (Message.user_text(OMITTED_NOTE), *messages[start:])
    return tuple(messages)


def newest_fitting(
    messages: Sequence[Message], *, max_bytes: int, max_tokens: int
) -> tuple[tuple[Message, ...], int]:
    """The newest part of ``messages`` that a summary request can carry, and how many of the
    oldest messages were dropped for it (0: ``messages`` unchanged).

    Each message counts with its size as JSON with non-ASCII escaped (bytes, as the request
    body is measured against the Messages API's request size limit) and its estimated tokens.
    The cut is made before an assistant message, as in :func:`drop_oldest`, with
    :data:`OMITTED_NOTE` in place of what was dropped. When not even the last exchange fits,
    the cut before the last assistant message is returned (the request may still be refused).
    """
    sizes = [len(json.dumps(m.model_dump(mode="json"))) for m in messages]
    tokens = [estimate_message(m) for m in messages]
    total_bytes, total_tokens = sum(sizes), sum(tokens)
    if total_bytes <= max_bytes and total_tokens <= max_tokens:
        return tuple(messages), 0
    note = len(OMITTED_NOTE) + 64
    last_cut = 0
    for start in range(1, len(messages)):
        total_bytes -= sizes[start - 1]
        total_tokens -= tokens[start - 1]
        if messages[start].role != "assistant":
            continue
        last_cut = start
        if total_bytes + note <= max_bytes and total_tokens + 64 <= max_tokens:
            return (Message.user_text(OMITTED_NOTE), *messages[start:]), start
    if last_cut:
        return (Message.user_text(OMITTED_NOTE), *messages[last_cut:]), last_cut
    return tuple(messages), 0
