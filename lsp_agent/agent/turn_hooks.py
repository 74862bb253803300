"""Hooks around one turn of the agent loop (Claude Code semantics).

* ``UserPromptSubmit`` runs before the first model request: a block (exit code 2,
  ``decision: "block"``, ``continue: false``) ends the turn without calling the model and the
  reason goes to the user; ``additionalContext`` (and plain stdout) goes into the user message,
  in front of the prompt.
* ``Stop`` runs when the model ends its turn: a block makes the model continue with the reason
  as a new user message. ``stop_hook_active`` tells the hook it already did so in this turn; at
  most :data:`MAX_STOP_CONTINUATIONS` continuations are honoured per turn.
* A ``PreToolUse`` or ``PostToolUse`` hook answering ``continue: false`` ends the turn once the
  current tool results are committed (:class:`TurnHooks` records it for the loop).

Hook messages (``systemMessage``) and hook errors are shown to the user as text chunks.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lsp_agent.config.settings import HookEvent
from lsp_agent.hooks.runner import HookOutcome, HookRunner
from lsp_agent.model.types import Message, TextBlock
from lsp_agent.protocol.events import AgentMessageChunk, TextContent

log = logging.getLogger(__name__)

MAX_STOP_CONTINUATIONS = 8
"""How many times Stop hooks may make the model continue within one turn."""

PROMPT_CONTEXT = "UserPromptSubmit hook context:"
"""Heads the text UserPromptSubmit hooks add in front of the prompt."""

STOP_FEEDBACK = "Stop hook feedback:"
"""Heads the user message that makes the model continue after a Stop hook blocked."""


@dataclass(kw_only=True)
class TurnHooks(HookRunner):
    """The session's hook runner for one turn, remembering which tool hooks asked to end the
    turn (``continue: false``); see :meth:`take_stop`."""

    stop_requests: list[str] = field(default_factory=list)

    @classmethod
    def around(cls, runner: HookRunner) -> TurnHooks:
        """A runner with the same hooks, directory, session and environment as ``runner``."""
        values = {f.name: getattr(runner, f.name) for f in dataclasses.fields(HookRunner)}
        return cls(**values)

    async def run(
        self,
        event: HookEvent,
        fields: dict[str, Any],
        *,
        target: str | None = None,
        permission_mode: str | None = None,
    ) -> HookOutcome:
        """:meth:`HookRunner.run`, recording a tool hook's request to end the turn."""
        outcome = await super().run(event, fields, target=target, permission_mode=permission_mode)
        if outcome.stop and event in ("PreToolUse", "PostToolUse"):
            self.stop_requests.append(outcome.stop_reason or f"a {event} hook ended the turn")
        return outcome

    def take_stop(self) -> str | None:
        """Why a tool hook asked to end the turn (for the user), or ``None``; clears it."""
        if not self.stop_requests:
            return None
        reasons, self.stop_requests = self.stop_requests, []
        return "Turn ended by a hook: " + "; ".join(dict.fromkeys(reasons))


@dataclass(frozen=True, kw_only=True)
class PromptGate:
    """What ``UserPromptSubmit`` decided: ``blocked`` is the text for the user when the
    prompt must not reach the model; ``messages`` is the history with the hooks' context
    added to the last (user) message; ``notes`` are hook messages and errors for the user."""

    messages: tuple[Message, ...]
    blocked: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class StopGate:
    """What ``Stop`` decided: ``feedback`` is the user message that makes the model continue
    (``None``: the turn ends); ``notes`` are for the user."""

    feedback: str | None = None
    notes: tuple[str, ...] = ()


async def submit_prompt(
    hooks: HookRunner, messages: tuple[Message, ...], *, mode: str, marker: str
) -> PromptGate:
    """Run ``UserPromptSubmit`` for the prompt in the last message of ``messages``.

    ``marker`` separates an interrupted turn's leftovers from the new prompt in a merged user
    message (the prompt is what follows its last occurrence).
    """
    last = messages[-1]
    start = _prompt_start(last, marker)
    prompt = "\n\n".join(b.text for b in last.content[start:] if isinstance(b, TextBlock))
    outcome = await hooks.user_prompt_submit(prompt=prompt, permission_mode=mode)
    notes = (*outcome.messages, *outcome.errors)
    if outcome.block or outcome.stop:
        reason = outcome.reason or outcome.stop_reason or "no reason given"
        return PromptGate(
            messages=messages,
            blocked=f"Prompt blocked by a UserPromptSubmit hook: {reason}",
            notes=notes,
        )
    if not outcome.context:
        return PromptGate(messages=messages, notes=notes)
    note = TextBlock(text="\n".join([PROMPT_CONTEXT, *outcome.context]))
    content = (*last.content[:start], note, *last.content[start:])
    return PromptGate(messages=(*messages[:-1], Message(role="user", content=content)), notes=notes)


async def check_stop(hooks: HookRunner, *, continued: int, mode: str) -> StopGate:
    """Run ``Stop`` after the model ended its turn; ``continued`` is how many times Stop hooks
    already made it continue in this turn (``stop_hook_active`` when above zero)."""
    outcome = await hooks.stop(stop_hook_active=continued > 0, permission_mode=mode)
    notes = (*outcome.messages, *outcome.errors)
    if outcome.stop or not outcome.block:
        # continue: false wins over a block (Claude Code): the turn ends either way.
        return StopGate(notes=notes)
    if continued >= MAX_STOP_CONTINUATIONS:
        log.warning("Stop hooks asked to continue %d times; ending the turn", continued)
        return StopGate(
            notes=(
                *notes,
                f"Stop hooks asked the model to continue more than {MAX_STOP_CONTINUATIONS} "
                "times in one turn; the turn ends here.",
            )
        )
    reason = outcome.reason or "a Stop hook asked you to continue"
    return StopGate(feedback=f"{STOP_FEEDBACK} {reason}", notes=notes)


def note_chunks(notes: Sequence[str]) -> list[AgentMessageChunk]:
    """Hook messages and errors as text chunks for the user (one line each)."""
    return [AgentMessageChunk(content=TextContent(text=f"\n[hook] {n}\n")) for n in notes]


REMINDER_OPEN = "<system-reminder>\n"
"""Opens the blocks the session adds in front of a prompt (:mod:`lsp_agent.context.start`)."""


def _prompt_start(message: Message, marker: str) -> int:
    """Index of the first content block of the new prompt in ``message``: after the last
    ``marker``, and after the reminders the session put in front of the prompt (the memory
    start block, memory changes), which are not the user's words."""
    start = 0
    for index in range(len(message.content) - 1, -1, -1):
        block = message.content[index]
        if isinstance(block, TextBlock) and block.text == marker:
            start = index + 1
            break
    while start < len(message.content) - 1:
        block = message.content[start]
        if not (isinstance(block, TextBlock) and block.text.startswith(REMINDER_OPEN)):
            break
        start += 1
    return start
