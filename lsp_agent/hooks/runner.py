"""Running Claude Code compatible command hooks and reading their answers.

Semantics follow Claude Code's hooks reference:

- Every handler whose matcher matches the event's target (the tool name for ``PreToolUse``/
  ``PostToolUse``, the source for ``SessionStart``, the trigger for ``PreCompact`` and
  ``PostCompact``) runs, in parallel; identical commands run once. The handler gets the
  event as JSON on stdin with Claude Code's field names (``session_id``, ``transcript_path``,
  ``cwd``, ``hook_event_name``, ``permission_mode``, ``tool_name``, ``tool_input``,
  ``tool_use_id``, ``tool_response``, ``prompt``, ``stop_hook_active``, ``source``, ``reason``,
  ``trigger``, ``custom_instructions``, ``compact_summary``, ``message``) and
  ``CLAUDE_PROJECT_DIR`` in its environment.
- Exit code 0: stdout may hold JSON objects (``continue``, ``stopReason``, ``systemMessage``,
  ``suppressOutput``, ``decision``, ``reason``, ``hookSpecificOutput.{permissionDecision,
  permissionDecisionReason, updatedInput, additionalContext}``); otherwise it is plain text
  (added to the model's context for ``UserPromptSubmit`` and ``SessionStart``). Every object
  printed counts (:mod:`lsp_agent.hooks.output`): before a tool call, any object that denies
  or blocks denies the call (whatever the exit code); objects that conflict, or a line that
  looks like JSON but is not an object, make the call ask; other lines are noise, logged and
  shown to the user.
- Exit code 2: blocking; stderr is the reason (for the model, or the user where the model is
  not involved). Any other exit code: a non-blocking error, reported, and the event proceeds.
- A handler is bounded: its ``timeout`` (seconds, default 60) kills its whole process group;
  stdout and stderr keep at most :data:`MAX_OUTPUT_BYTES` each. A hang, a crash, garbage or
  huge output is reported and never counts as an "allow".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lsp_agent.config.settings import HookEvent, HookMatcher
from lsp_agent.hooks.output import HookStdout, conflicts, parse_stdout, quote

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0
"""A handler's time limit when its settings give none (seconds)."""

MAX_OUTPUT_BYTES = 256 * 1024
"""How much of a handler's stdout and of its stderr is kept (bytes each)."""

KILL_GRACE_S = 0.5
"""Between SIGTERM and SIGKILL when stopping a handler (seconds)."""

MAX_REASON_CHARS = 10_000
"""Reasons and context passed on to the model are cut to this many characters."""

HookSource = Callable[[], Mapping[str, Sequence[tuple[str, HookMatcher]]]]
"""Returns the hook matchers in force by event, each with its settings source."""

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


@dataclass(kw_only=True)
class HookRunner:
    """Runs the hooks of one session. ``hooks`` supplies the matchers in force (re-read for
    every event, so settings reloads apply); ``cwd`` is the project directory; ``env`` is added
    to the handlers' environment (settings ``env``)."""

    hooks: HookSource
    cwd: Path
    session_id: str
    transcript_path: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    default_timeout_s: float = DEFAULT_TIMEOUT_S
    _background: set[asyncio.Task[HookOutcome]] = field(default_factory=set)

    # -- events ------------------------------------------------------------------------------

    async def pre_tool_use(
        self, *, tool_name: str, tool_input: dict[str, Any], tool_use_id: str, permission_mode: str
    ) -> HookOutcome:
        """``PreToolUse``: may deny, ask, allow or rewrite the input (see :class:`HookOutcome`)."""
        return await self.run(
            "PreToolUse",
            {"tool_name": tool_name, "tool_input": tool_input, "tool_use_id": tool_use_id},
            target=tool_name,
            permission_mode=permission_mode,
        )

    async def post_tool_use(
        self,
        *,
        tool_name: str,
        tool_input: dict[str, Any],
        tool_response: dict[str, Any],
        tool_use_id: str,
        permission_mode: str,
    ) -> HookOutcome:
        """``PostToolUse``: ``block``/``reason`` and ``context`` go to the model."""
        return await self.run(
            "PostToolUse",
            {
                "tool_name": tool_name,
                "tool_input": tool_input,
                "tool_response": tool_response,
                "tool_use_id": tool_use_id,
            },
            target=tool_name,
            permission_mode=permission_mode,
        )

    async def user_prompt_submit(self, *, prompt: str, permission_mode: str) -> HookOutcome:
        """``UserPromptSubmit``: ``block`` rejects the prompt (``reason`` for the user);
        ``context`` (and plain stdout) is added to the model's context."""
        return await self.run(
            "UserPromptSubmit", {"prompt": prompt}, permission_mode=permission_mode
        )

    async def stop(
        self, *, stop_hook_active: bool, permission_mode: str, subagent: bool = False
    ) -> HookOutcome:
        """``Stop``/``SubagentStop``: ``block`` makes the model continue with ``reason``."""
        return await self.run(
            "SubagentStop" if subagent else "Stop",
            {"stop_hook_active": stop_hook_active},
            permission_mode=permission_mode,
        )

    async def session_start(self, *, source: str) -> HookOutcome:
        """``SessionStart`` (``source``: startup, resume, clear, compact): ``context`` and plain
        stdout go to the model."""
        return await self.run("SessionStart", {"source": source}, target=source)

    async def session_end(self, *, reason: str) -> HookOutcome:
        """``SessionEnd`` (``reason``: clear, logout, prompt_input_exit, other)."""
        return await self.run("SessionEnd", {"reason": reason})

    async def pre_compact(self, *, trigger: str, custom_instructions: str = "") -> HookOutcome:
        """``PreCompact`` (``trigger``: manual or auto)."""
        return await self.run(
            "PreCompact",
            {"trigger": trigger, "custom_instructions": custom_instructions},
            target=trigger,
        )

    async def post_compact(self, *, trigger: str, compact_summary: str) -> HookOutcome:
        """``PostCompact`` (``trigger``: manual or auto), with the summary that was written."""
        return await self.run(
            "PostCompact",
            {"trigger": trigger, "compact_summary": compact_summary},
            target=trigger,
        )

    def notify(self, *, message: str) -> None:
        """``Notification``, in the background (it must not delay the prompt it announces)."""
        if not self._matching("Notification", None):
            return
        task = asyncio.ensure_future(self.run("Notification", {"message": message}))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def instructions_loaded(self, fields: dict[str, Any]) -> None:
        """``InstructionsLoaded`` (observability only), in the background: ``fields`` are
        Claude Code's ``file_path``, ``memory_type`` (``User``, ``Project``, ``Local``,
        ``Managed``), ``load_reason`` (``session_start``, ``nested_traversal``,
        ``path_glob_match``, ``include``; the matcher's target) and, where they apply,
        ``globs``, ``trigger_file_path``, ``parent_file_path``."""
        reason = str(fields.get("load_reason", ""))
        if not self._matching("InstructionsLoaded", reason):
            return
        task = asyncio.ensure_future(self.run("InstructionsLoaded", fields, target=reason))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def aclose(self) -> None:
        """Wait (bounded by each handler's timeout) for background hooks to finish."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    # -- machinery -----------------------------------------------------------------------------

    def _matching(self, event: HookEvent, target: str | None) -> list[tuple[str, float, str]]:
        try:
            configured = self.hooks().get(event, ())
        except Exception:
            log.exception("reading hook settings failed; no %s hooks run", event)
            return []
        out: list[tuple[str, float, str]] = []
        seen: set[str] = set()
        for source, matcher in configured:
            if not _matches(matcher.matcher, target):
                continue
            for handler in matcher.hooks:
                if handler.command in seen:
                    continue
                seen.add(handler.command)
                out.append((handler.command, handler.timeout or self.default_timeout_s, source))
        return out

    async def run(
        self,
        event: HookEvent,
        fields: dict[str, Any],
        *,
        target: str | None = None,
        permission_mode: str | None = None,
    ) -> HookOutcome:
        """Run every matching handler for ``event`` and combine their answers."""
        handlers = self._matching(event, target)
        if not handlers:
            return HookOutcome()
        payload: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.cwd),
            "hook_event_name": event,
        }
        if permission_mode is not None:
            payload["permission_mode"] = permission_mode
        payload.update(fields)
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        runs = await asyncio.gather(
            *(
                self._run_one(command, timeout, source, data)
                for command, timeout, source in handlers
            )
        )
        return _combine(event, runs)

    async def _run_one(self, command: str, timeout: float, source: str, data: bytes) -> HookRun:
        env = {**os.environ, **self.env, "CLAUDE_PROJECT_DIR": str(self.cwd)}
        shell = shutil.which("bash") or "/bin/sh"
        try:
            proc = await asyncio.create_subprocess_exec(
                shell,
                "-c",
                command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return HookRun(
                command=command,
                source=source,
                exit_code=None,
                stdout="",
                stderr="",
                error=f"could not start: {exc}",
            )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        out_buf = _Bounded()
        err_buf = _Bounded()
        readers = [
            asyncio.create_task(out_buf.drain(proc.stdout)),
            asyncio.create_task(err_buf.drain(proc.stderr)),
        ]
        timed_out = False
        try:
            try:
                async with asyncio.timeout(timeout):
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        proc.stdin.write(data)
                        await proc.stdin.drain()
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
                        proc.stdin.close()
                    await proc.wait()
            except TimeoutError:
                timed_out = True
        finally:
            # Stop whatever the hook left running (or all of it, on timeout or cancel).
            await _kill_group(proc)
            _done, pending = await asyncio.wait(readers, timeout=1.0)
            for task in pending:
                task.cancel()
        stdout, stderr = out_buf.text(), err_buf.text()
        truncated = out_buf.truncated or err_buf.truncated
        if timed_out:
            return HookRun(
                command=command,
                source=source,
                exit_code=None,
                stdout=stdout,
                stderr=stderr,
                timed_out=True,
                truncated=truncated,
                parsed=parse_stdout(stdout),
                error=f"timed out after {timeout:g} s and was stopped",
            )
        code = proc.returncode if proc.returncode is not None else -1
        parsed = parse_stdout(stdout)
        if parsed.noise and (parsed.objects or parsed.malformed):
            log.info("hook `%s` printed lines that are not JSON: %s", command, parsed.noise[:5])
        return HookRun(
            command=command,
            source=source,
            exit_code=code,
            stdout=stdout,
            stderr=stderr,
            truncated=truncated,
            parsed=parsed,
        )


class _Bounded:
    """Keeps the first :data:`MAX_OUTPUT_BYTES` of a stream and discards the rest."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.truncated = False

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            room = MAX_OUTPUT_BYTES - len(self.data)
            if room > 0:
                self.data += chunk[:room]
            if len(chunk) > max(room, 0):
                self.truncated = True

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        if proc.returncode is not None:
            return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), KILL_GRACE_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), KILL_GRACE_S)


def _matches(matcher: str | None, target: str | None) -> bool:
    if matcher in (None, "", "*") or target is None:
        return True
    assert matcher is not None
    if re.fullmatch(r"[A-Za-z0-9_]+", matcher):
        return matcher == target
    try:
        return re.fullmatch(matcher, target) is not None
    except re.error:
        return False


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


def _combine(event: HookEvent, runs: Sequence[HookRun]) -> HookOutcome:
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
