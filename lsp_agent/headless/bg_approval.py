"""A background run's permission prompts, answered by the user's editor
(:mod:`lsp_agent.store.run_approvals`): a tool call the permission engine would ask about is
written beside the run's record and waits (at most 10 minutes) for the editor's answer, which
can allow that one call; anything else is a rejection. Deny rules and the run's mode have
decided before anything is asked (deny beats ask)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse, Refusal


class EditorApprover:
    """Asks the editor about background run ``run_id``'s tool calls through files in
    ``folder``; writes a line to ``err`` (the run's log) when nobody answered in time."""

    def __init__(self, *, folder: Path, run_id: str, environ: Mapping[str, str], err: TextIO):
        from lsp_agent.store.run_approvals import wait_seconds

        self._folder = folder
        self._run_id = run_id
        self._wait_s = wait_seconds(environ)
        self._err = err
        self._tools: dict[str, str] = {}

    def unattended(self, tool: str, request: PermissionRequest) -> Refusal | None:
        """``AgentConfig.unattended`` of a background run: never a refusal of its own, so the
        host asks the editor (through :meth:`__call__`); notes the tool's name."""
        self._tools[request.tool_call.tool_call_id] = tool
        return None

    async def __call__(self, request: PermissionRequest) -> PermissionResponse:
        """The editor's answer: ``allow_once`` only when it allowed this very call."""
        from lsp_agent.store import run_approvals

        call = request.tool_call
        raw = call.raw_input or {}
        tool = self._tools.pop(call.tool_call_id, call.title)
        preview = _preview(raw)
        if isinstance(raw.get("command"), str) and len(preview) > run_approvals.PREVIEW_CHARS:
            # The editor's question could not show all of it: what the user would allow is
            # not what would run (padding can push a dangerous end out of sight). Fail closed.
            why = (
                f"This command is {len(preview):,} characters long, too long to show for "
                f"approval in the editor (at most {run_approvals.PREVIEW_CHARS:,}); it was "
                "denied without asking. Write a script file and run that, or split the command."
            )
            self._err.write(f"lsp-agent: {call.title} denied: {why}\n")
            self._err.flush()
            return PermissionResponse(outcome="selected", option_id="reject_once", feedback=why)
        pending = run_approvals.new_request(
            run_id=self._run_id,
            tool=tool,
            summary=call.title,
            preview=preview,
            wait_s=self._wait_s,
            now=time.time(),
        )
        try:
            answer, answered = await run_approvals.wait_for_answer(self._folder, pending)
        except OSError as exc:
            self._err.write(f"lsp-agent: could not ask the editor about {call.title}: {exc}\n")
            answer, answered = "deny", True
        if not answered:
            self._err.write(
                f"lsp-agent: no editor answered within {_duration(self._wait_s)}: "
                f"{call.title} denied\n"
            )
            self._err.flush()
        allow = next((o for o in request.options if o.kind == "allow_once"), None)
        if answer == "allow" and allow is not None:
            return PermissionResponse(outcome="selected", option_id=allow.option_id)
        if not answered:
            # Nobody refused: saying "the user rejected it" would make the model apologise
            # for, or argue with, a decision nobody made.
            return PermissionResponse(
                outcome="cancelled",
                feedback=f"No editor answered within {_duration(self._wait_s)}: nobody "
                "approved or refused it.",
            )
        return PermissionResponse(
            outcome="selected",
            option_id="reject_once",
            feedback="The user denied this in the editor.",
        )


def _preview(raw: Mapping[str, object]) -> str:
    """What the call would do, as text: a command or the input's JSON."""
    command = raw.get("command")
    if isinstance(command, str):
        return command
    return json.dumps(dict(raw), indent=2, default=str)


def _duration(seconds: float) -> str:
    return f"{round(seconds / 60)} min" if seconds >= 60 else f"{seconds:g} s"
