"""Combining what the hooks of one event answered into one outcome.

Merge rules follow Claude Code's hooks reference: several hooks' permission decisions merge to
the strictest (deny > ask > allow); any block blocks; contexts and messages add up. Every JSON
object a hook printed counts (:mod:`lsp_agent.hooks.output`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lsp_agent.config.settings import HookEvent
from lsp_agent.hooks.output import HookStdout, conflicts, quote

log = logging.getLogger(__name__)

MAX_OUTPUT_BYTES = 256 * 1024
"""How much of a handler's stdout and of its stderr is kept (bytes each)."""

MAX_REASON_CHARS = 10_000
"""Reasons and context passed on to the model are cut to this many characters."""

PermissionDecision = Literal["allow", "deny", "ask"]


@dataclass(frozen=True, kw_only=True)
class HookRun:
    """What one handler did. ``exit_code`` is ``None`` when it did not finish (timeout,
    failure to start); ``parsed`` is its stdout split into JSON objects, malformed lines and
    noise (:func:`~lsp_agent.hooks.output.parse_stdout`)."""

    command: str
    source: str
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False
    parsed: HookStdout = field(default_factory=HookStdout)
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class HookOutcome:
    """The combined answer of every handler that ran for one event.

    ``block`` (exit 2, ``decision: "block"``, ``permissionDecision: "deny"``) with ``reason``;
    ``permission`` is the strongest ``permissionDecision`` (deny > ask > allow) for
    ``PreToolUse``; ``updated_input`` replaces the tool input; ``context`` goes to the model;
    ``stop`` (``continue: false``) ends the turn with ``stop_reason``; ``messages`` and
    ``errors`` are for the user (errors are also logged).
    """

    block: bool = False
    reason: str = ""
    permission: PermissionDecision | None = None
    permission_reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: tuple[str, ...] = ()
    stop: bool = False
    stop_reason: str | None = None
    messages: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    runs: tuple[HookRun, ...] = ()

    @property
    def ran(self) -> bool:
        """Whether any handler ran."""
        return bool(self.runs)


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS] + " …[truncated]"


_RANK = {"allow": 0, "ask": 1, "deny": 2}
"""Several hooks' permission decisions merge to the strictest (deny > ask > allow)."""


@dataclass(kw_only=True)
class _Merge:
    """The hooks' outputs merged so far, field by field (one merge rule per method)."""

    event: HookEvent
    block: bool = False
    reasons: list[str] = field(default_factory=list)
    permission: PermissionDecision | None = None
    permission_reasons: list[str] = field(default_factory=list)
    updated: dict[str, Any] | None = None
    context: list[str] = field(default_factory=list)
    stop: bool = False
    stop_reason: str | None = None
    messages: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    no_rewrite: bool = False

    def decide(self, value: PermissionDecision, why: str) -> None:
        if self.permission is None or _RANK[value] > _RANK[self.permission]:
            self.permission = value
        if why:
            self.permission_reasons.append(why)

    def blocked(self, reason: str, why: str) -> None:
        """A hook blocked: the reason is kept; before a tool call it is also a deny."""
        self.block = True
        self.reasons.append(reason)
        if self.event == "PreToolUse":
            self.decide("deny", why)

    def exit_status(self, run: HookRun, name: str) -> bool:
        """Merge what the process's end says; true when its output is not to be read."""
        if run.error is not None:
            self.errors.append(f"{name} {run.error}")
            log.warning("%s %s", name, run.error)
            return True
        if run.truncated:
            self.errors.append(
                f"{name} printed more than {MAX_OUTPUT_BYTES} bytes; the rest was dropped"
            )
        if run.exit_code == 2:
            self.blocked(_cut(run.stderr) or f"{name} blocked this (exit code 2)", _cut(run.stderr))
            return True
        if run.exit_code != 0:
            detail = _cut(run.stderr) or _cut(run.stdout)
            self.errors.append(
                f"{name} failed with exit code {run.exit_code}" + (f": {detail}" if detail else "")
            )
            log.warning("%s failed with exit code %s: %s", name, run.exit_code, detail)
            return True
        return False

    def plain_output(self, run: HookRun, name: str) -> None:
        """Output without JSON: context for prompt and start hooks."""
        if self.event in ("UserPromptSubmit", "SessionStart") and run.stdout.strip():
            self.context.append(_cut(run.stdout))

    def unsure(self, why: str) -> None:
        """The output cannot be trusted (malformed or conflicting): before a tool call the
        user is asked, never the tool run unasked."""
        self.errors.append(why)
        log.warning("%s", why)
        if self.event == "PreToolUse":
            self.decide("ask", why)

    def objects(self, run: HookRun, name: str) -> None:
        """Every JSON object the hook printed, under the rule of :mod:`lsp_agent.hooks.output`:
        each one is merged (so any deny or block counts), malformed or conflicting output asks,
        and output that was not one plain object is quoted to the user."""
        parts = run.parsed
        if not parts.objects and not parts.malformed:
            self.plain_output(run, name)
            return
        if parts.malformed:
            self.unsure(
                f"{name} printed output that looks like JSON but is not a JSON object "
                f"({_short(parts.malformed[0], 120)}); "
                + ("the call needs your approval" if self.event == "PreToolUse" else "ignored")
            )
        clash = conflicts(parts.objects)
        if clash:
            self.unsure(
                f"{name} printed JSON objects that disagree on {', '.join(clash)}"
                + ("; the call needs your approval" if self.event == "PreToolUse" else "")
            )
            self.no_rewrite = True
        for out in parts.objects:
            self.common(out, name)
            self.specific(out, name)
        if not parts.plain:
            self.messages.append(f"{name} printed:\n{quote(run.stdout)}")

    def failed_objects(self, run: HookRun, name: str) -> None:
        """A hook that failed (exit code other than 0 and 2) still denies when one of its
        objects denies or blocks: a deny is never lost to an exit code."""
        for out in run.parsed.objects:
            specific = out.get("hookSpecificOutput")
            choice = specific.get("permissionDecision") if isinstance(specific, dict) else None
            if out.get("decision") == "block" or choice == "deny":
                reason = out.get("reason") or (specific or {}).get("permissionDecisionReason")
                text = _cut(reason) if isinstance(reason, str) else ""
                self.blocked(text or f"{name} denied this", text)

    def common(self, out: Mapping[str, Any], name: str) -> None:
        """``continue``/``stopReason``, ``systemMessage`` and ``decision``/``reason``."""
        if out.get("continue") is False:
            self.stop = True
            reason = out.get("stopReason")
            self.stop_reason = self.stop_reason or (
                reason if isinstance(reason, str) else f"stopped by {name}"
            )
        message = out.get("systemMessage")
        if isinstance(message, str) and message.strip():
            self.messages.append(_cut(message))
        decision = out.get("decision")
        reason = out.get("reason")
        reason_text = _cut(reason) if isinstance(reason, str) else ""
        if decision == "block":
            self.blocked(reason_text or f"{name} blocked this", reason_text)
        elif decision == "approve" and self.event == "PreToolUse":
            self.decide("allow", reason_text)
        elif decision not in (None, "approve", "undefined"):
            self.errors.append(f"{name} returned an unknown decision {decision!r}; ignored")

    def specific(self, out: Mapping[str, Any], name: str) -> None:
        """``hookSpecificOutput``: ``additionalContext``; before a tool call also
        ``permissionDecision`` and ``updatedInput``."""
        specific = out.get("hookSpecificOutput")
        if specific is not None and not isinstance(specific, dict):
            self.errors.append(f"{name}: hookSpecificOutput must be an object; ignored")
            return
        if not specific:
            return
        extra = specific.get("additionalContext")
        if isinstance(extra, str) and extra.strip():
            self.context.append(_cut(extra))
        if self.event != "PreToolUse":
            return
        choice = specific.get("permissionDecision")
        why = specific.get("permissionDecisionReason")
        why_text = _cut(why) if isinstance(why, str) else ""
        if choice in ("allow", "deny", "ask"):
            self.decide(choice, why_text)
        elif choice is not None:
            self.errors.append(f"{name} returned an unknown permissionDecision {choice!r}; ignored")
        self.updated_input(specific.get("updatedInput"), choice, name)

    def updated_input(self, new_input: Any, choice: Any, name: str) -> None:
        """The first hook's rewritten input wins; a denying hook's rewrite is ignored."""
        if new_input is None:
            return
        if not isinstance(new_input, dict):
            self.errors.append(f"{name}: updatedInput must be an object; ignored")
        elif choice == "deny":
            pass
        elif self.updated is None:
            self.updated = new_input
        elif new_input != self.updated:
            self.errors.append(f"{name}: several hooks rewrote the input; only the first is used")

    def outcome(self, runs: Sequence[HookRun]) -> HookOutcome:
        if self.permission == "deny" and not self.block:
            self.block = True
            self.reasons.extend(self.permission_reasons[:1] or ["a PreToolUse hook denied this"])
        return HookOutcome(
            block=self.block,
            reason="\n".join(r for r in self.reasons if r),
            permission=self.permission,
            permission_reason="\n".join(r for r in self.permission_reasons if r),
            updated_input=(
                self.updated
                if self.permission != "deny" and not self.block and not self.no_rewrite
                else None
            ),
            context=tuple(self.context),
            stop=self.stop,
            stop_reason=self.stop_reason,
            messages=tuple(self.messages),
            errors=tuple(self.errors),
            runs=tuple(runs),
        )


def combine(event: HookEvent, runs: Sequence[HookRun]) -> HookOutcome:
    """Merge every hook run of one event into one outcome, field by field (:class:`_Merge`)."""
    merged = _Merge(event=event)
    for run in runs:
        name = f"{event} hook `{_short(run.command)}`"
        if merged.exit_status(run, name):
            merged.failed_objects(run, name)
            continue
        merged.objects(run, name)
    return merged.outcome(runs)


def _short(command: str, limit: int = 60) -> str:
    one = " ".join(command.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"
