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
from typing import Any

from lsp_agent.config.settings import HookEvent, HookMatcher
from lsp_agent.hooks.outcome import (
    MAX_OUTPUT_BYTES,
    HookOutcome,
    HookRun,
    PermissionDecision,
    combine,
)
from lsp_agent.hooks.output import parse_stdout

__all__ = ["MAX_OUTPUT_BYTES", "HookOutcome", "HookRun", "HookRunner", "PermissionDecision"]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 60.0
"""A handler's time limit when its settings give none (seconds)."""

KILL_GRACE_S = 0.5
"""Between SIGTERM and SIGKILL when stopping a handler (seconds)."""


HookSource = Callable[[], Mapping[str, Sequence[tuple[str, HookMatcher]]]]
"""Returns the hook matchers in force by event, each with its settings source."""


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
        return combine(event, runs)

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
