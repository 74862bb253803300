"""Output of ``lsp-agent run``: the three ``--output-format`` renderers.

The event shapes follow Claude Code's ``-p`` output so tools written for it can read ours:

``{"type": "system", "subtype": "init", ...}``
    first line of ``stream-json``: cwd, session id, tool names, model, permission mode.
``{"type": "assistant", "message": {...}}`` / ``{"type": "user", "message": {...}}``
    each conversation message as the Messages API has it: an assistant message is the API's
    response (``id``, ``type``, ``role``, ``model``, ``content``, ``stop_reason``,
    ``stop_sequence``, ``usage``), a user message carries the ``tool_result`` blocks.
``{"type": "stream_event", "event": {...}}``
    with ``--include-partial-messages``: each server-sent event of the model's answer
    (``message_start``, ``content_block_delta``, ...), before the assistant message.
``{"type": "tool_progress", ...}``
    a tool call changed status (``pending``, ``in_progress``, ``completed``, ``failed``;
    ``denied: true`` when the permission engine refused it) or streamed output; always the
    keys ``status``, ``title`` and ``output`` (``null`` when unchanged); our addition, named
    like the Agent SDK's tool progress message. The
    verification of the run's edits (``--diagnostics``) is a ``verify_…`` call whose completed
    event carries the verdict as ``verification`` (docs/verification.md).
``{"type": "system", "subtype": "api_retry", ...}``
    a model request failed and is about to be retried (Claude Code's message: ``attempt``,
    ``max_retries``, ``retry_delay_ms``, ``error_status``, ``error``); in text and json
    mode a line on stderr instead (see :func:`retry_event`).
``{"type": "result", "subtype": ..., ...}``
    the last line: see :func:`result_event`.

Renderers take plain JSON-able dicts so they depend on nothing but the standard library.
"""

from __future__ import annotations

import asyncio
import io
import json
import uuid
from typing import Any, Protocol, TextIO

from lsp_agent.headless.exit_codes import Outcome

Event = dict[str, Any]


class Renderer(Protocol):
    """Where the events of one run go. Methods are called in order: ``init`` once, then
    ``message``/``progress`` any number of times, ``result`` once."""

    def init(self, event: Event) -> None:
        """The ``system/init`` event."""
        ...

    def message(self, event: Event) -> None:
        """An ``assistant`` or ``user`` message event."""
        ...

    def progress(self, event: Event) -> None:
        """A ``tool_progress`` event."""
        ...

    def partial(self, event: Event) -> None:
        """A ``stream_event`` (``--include-partial-messages``)."""
        ...

    def system(self, event: Event) -> None:
        """A ``system`` event after ``init`` (``api_retry``)."""
        ...

    def result(self, event: Event) -> None:
        """The final ``result`` event."""
        ...


def init_event(
    *,
    session_id: str,
    cwd: str,
    tools: list[str],
    model: str,
    permission_mode: str,
    api_key_source: str,
    version: str,
    mcp_servers: list[dict[str, str]] | None = None,
    slash_commands: list[str] | None = None,
) -> Event:
    """The ``system/init`` event (Claude Code's field names); ``mcp_servers`` holds
    ``{"name", "status"}`` per configured MCP server, ``slash_commands`` the command names."""
    return {
        "type": "system",
        "subtype": "init",
        "cwd": cwd,
        "session_id": session_id,
        "tools": tools,
        "mcp_servers": mcp_servers or [],
        "model": model,
        "permissionMode": permission_mode,
        "apiKeySource": api_key_source,
        "slash_commands": slash_commands or [],
        "output_style": "default",
        "lsp_agent_version": version,
        "uuid": str(uuid.uuid4()),
    }


def message_event(*, message: dict[str, Any], session_id: str) -> Event:
    """An ``assistant``/``user`` event wrapping one Messages-API message dict
    (``{"role": ..., "content": [...]}``)."""
    role = message.get("role")
    if role not in ("assistant", "user"):
        raise ValueError(f"message role must be 'assistant' or 'user', got {role!r}")
    return {
        "type": role,
        "message": message,
        "parent_tool_use_id": None,
        "session_id": session_id,
        "uuid": str(uuid.uuid4()),
    }


def stream_event(*, event: dict[str, Any], session_id: str) -> Event:
    """A ``stream_event`` wrapping one raw server-sent event of the Messages API."""
    return {
        "type": "stream_event",
        "event": event,
        "parent_tool_use_id": None,
        "session_id": session_id,
        "uuid": str(uuid.uuid4()),
    }


def result_event(
    *,
    outcome: Outcome,
    result: str,
    session_id: str,
    num_turns: int,
    duration_ms: int,
    duration_api_ms: int,
    usage: dict[str, int],
    stop_reason: str | None,
    permission_denials: list[dict[str, Any]],
    total_cost_usd: float = 0.0,
    model_usage: dict[str, Any] | None = None,
) -> Event:
    """The final ``result`` event.

    ``result`` is the text of the last assistant message; ``num_turns`` the number of model
    responses in this run; durations are wall-clock milliseconds (``duration_api_ms``: time
    spent waiting on the model's answers); ``usage`` sums the token counts of every response;
    ``stop_reason`` is the API's stop reason of the last response (``None`` when the turn got
    none, e.g. the endpoint was unreachable). ``errors`` (Claude Code's field) lists the error
    message when the run failed. ``total_cost_usd`` (US dollars) and ``model_usage``
    (Claude Code's ``modelUsage``, per model) cover every response of the run so far, priced
    from list prices (:mod:`lsp_agent.headless.cost`).
    """
    event: Event = {
        "type": "result",
        "subtype": outcome.subtype,
        "is_error": outcome.is_error,
        "duration_ms": duration_ms,
        "duration_api_ms": duration_api_ms,
        "num_turns": num_turns,
        "result": result,
        "stop_reason": stop_reason,
        "session_id": session_id,
        "total_cost_usd": total_cost_usd,
        "usage": usage,
        "modelUsage": model_usage or {},
        "permission_denials": permission_denials,
        "uuid": str(uuid.uuid4()),
    }
    if outcome.error is not None:
        event["errors"] = [outcome.error]
    return event


def retry_event(
    *,
    attempt: int,
    max_retries: int,
    delay_ms: int,
    status: int | None,
    error: str,
    message: str,
    session_id: str,
) -> Event:
    """Claude Code's ``system``/``api_retry`` message. ``error`` is Claude Code's category
    (``rate_limit`` for HTTP 429, ``server_error`` for 5xx and overload, ``unknown`` for a
    failed connection); ``error_type`` (the API's error type) and ``message`` are ours."""
    if status == 429:
        category = "rate_limit"
    elif status is not None and status >= 500:
        category = "server_error"
    else:
        category = "unknown"
    return {
        "type": "system",
        "subtype": "api_retry",
        "attempt": attempt,
        "max_retries": max_retries,
        "retry_delay_ms": delay_ms,
        "error_status": status,
        "error": category,
        "error_type": error,
        "message": message,
        "session_id": session_id,
        "uuid": str(uuid.uuid4()),
    }


def retry_line(event: Event) -> str:
    """The stderr line of an ``api_retry`` event:
    ``lsp-agent: retrying (2/4) in 3 s — overloaded_error (HTTP 529)``."""
    delay_ms = max(int(event.get("retry_delay_ms") or 0), 0)
    wait = f"{delay_ms / 1000:.0f} s" if delay_ms >= 1000 else f"{delay_ms} ms"
    status = event.get("error_status")
    cause = str(event.get("error_type") or event.get("error") or "error")
    if status is not None:
        cause += f" (HTTP {status})"
    return (
        f"lsp-agent: retrying ({event.get('attempt')}/{event.get('max_retries')}) in {wait}"
        f" — {cause}"
    )


def _dump(event: Event) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


class StreamJsonRenderer:
    """``stream-json``: every event as one JSON line on ``out``.

    The lines of one burst (the events a step of the event loop emits: an answer's message and
    its tool calls' progress, say) are flushed together when the loop takes its next step, so a
    turn makes one or two writes instead of one per line; a reader still has every line as soon
    as the run next waits in the event loop (for the model, a tool's process). Without a
    running event loop, and
    for the ``result`` line, each line is flushed at once. A line written but not flushed yet
    sits in ``out``'s buffer, which the process flushes at exit whatever ends the run.
    """

    def __init__(self, *, out: TextIO) -> None:
        self._out = out
        stream = getattr(out, "wrapped", out)  # the run's output wraps the real stream
        if (
            isinstance(stream, io.TextIOWrapper)
            and stream.write_through
            and isinstance(stream.buffer, io.FileIO)
        ):
            # PYTHONUNBUFFERED (set in many container images) makes stdout write through to
            # its descriptor: every line would be a system call of its own, and wake the
            # reader. The bursts are flushed here anyway, so the lines wait in the stream's
            # text buffer until then. (In-memory streams, such as a test's capture, are left
            # as they are.)
            stream.reconfigure(write_through=False)
        self._flush_due = False
        self._failed: OSError | ValueError | None = None
        """What the last deferred flush raised (a reader gone away): raised by the next write,
        where the caller can handle it, instead of in an event-loop callback."""

    def _write(self, event: Event) -> None:
        if self._failed is not None:
            failed, self._failed = self._failed, None
            raise failed
        self._out.write(_dump(event) + "\n")
        if self._flush_due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._out.flush()
            return
        self._flush_due = True
        loop.call_soon(self._deferred_flush)

    def _deferred_flush(self) -> None:
        self._flush_due = False
        try:
            self._out.flush()
        except (OSError, ValueError) as exc:
            self._failed = exc

    def init(self, event: Event) -> None:
        """Write the init line."""
        self._write(event)

    def message(self, event: Event) -> None:
        """Write a message line."""
        self._write(event)

    def progress(self, event: Event) -> None:
        """Write a progress line."""
        self._write(event)

    def partial(self, event: Event) -> None:
        """Write a stream event line."""
        self._write(event)

    def system(self, event: Event) -> None:
        """Write a system event line."""
        self._write(event)

    def result(self, event: Event) -> None:
        """Write the result line (flushed at once: it is the last)."""
        self._flush_due = False
        self._out.write(_dump(event) + "\n")
        self._out.flush()


class JsonRenderer:
    """``json``: only the result object, pretty-printed, on ``out``."""

    def __init__(self, *, out: TextIO, err: TextIO, verbose: bool) -> None:
        self._out = out
        self._err = err
        self._progress = _ProgressLines(err=err) if verbose else None

    def init(self, event: Event) -> None:
        """Nothing: only the result is printed."""

    def message(self, event: Event) -> None:
        """Nothing: only the result is printed."""

    def progress(self, event: Event) -> None:
        """Progress goes to stderr with ``--verbose``."""
        if self._progress is not None:
            self._progress.show(event)

    def partial(self, event: Event) -> None:
        """Nothing: stream events exist only in ``stream-json``."""

    def system(self, event: Event) -> None:
        """A retry is said on stderr (stdout holds only the answer)."""
        _system_line(self._err, event)

    def result(self, event: Event) -> None:
        """Print the result object."""
        self._out.write(json.dumps(event, ensure_ascii=False, indent=2) + "\n")
        self._out.flush()


class TextRenderer:
    """``text``: the final answer on ``out``; errors (and progress with ``--verbose``) on
    ``err``."""

    def __init__(
        self, *, out: TextIO, err: TextIO, verbose: bool, broken_settings: tuple[str, ...] = ()
    ) -> None:
        self._out = out
        self._err = err
        self._progress = _ProgressLines(err=err) if verbose else None
        self._mode = "default"
        self._broken = broken_settings

    def init(self, event: Event) -> None:
        """Nothing is printed; the run's permission mode is kept for the denial trailer."""
        self._mode = str(event.get("permissionMode") or "default")

    def message(self, event: Event) -> None:
        """Nothing in text mode (the answer is the result)."""

    def progress(self, event: Event) -> None:
        """Progress goes to stderr with ``--verbose``."""
        if self._progress is not None:
            self._progress.show(event)

    def partial(self, event: Event) -> None:
        """Nothing: stream events exist only in ``stream-json``."""

    def system(self, event: Event) -> None:
        """A retry is said on stderr (stdout holds only the answer)."""
        _system_line(self._err, event)

    def result(self, event: Event) -> None:
        """Print the final text; on stderr the tool calls that were denied and, on failure,
        the error. A result that is only the error (a refused ``#`` note, a failed slash
        command) goes to stderr alone: stdout carries answers."""
        text = str(event.get("result") or "")
        if text and text not in event.get("errors", []):
            self._out.write(text if text.endswith("\n") else text + "\n")
            self._out.flush()
        for line in denial_lines(
            event.get("permission_denials") or [], mode=self._mode, broken=self._broken
        ):
            self._err.write(line + "\n")
        for error in event.get("errors", []):
            self._err.write(f"lsp-agent: error: {error}\n")
        self._err.flush()


def _system_line(err: TextIO, event: Event) -> None:
    if event.get("subtype") == "api_retry":
        err.write(retry_line(event) + "\n")
        err.flush()


DENIAL_HINTS = {
    "plan": "plan mode changes nothing; to let it make changes, run again with "
    "--permission-mode default (or acceptEdits) and --allowedTools",
    "dontAsk": "dontAsk mode runs only what a rule allows; allow with --allowedTools",
}
"""Why calls were denied and how to allow them, by permission mode (others: the default)."""


def denial_lines(
    denials: list[dict[str, Any]], *, mode: str = "default", broken: tuple[str, ...] = ()
) -> list[str]:
    """What text mode says on stderr about the denied tool calls (none: nothing) in a run of
    permission ``mode``: in ``plan`` an allow rule cannot help, so it says how to leave it;
    with ``broken`` settings files (``file:line:col`` of their first error) no flag helps, so
    it names them."""
    if not denials:
        return []
    hint = DENIAL_HINTS.get(
        mode, "a non-interactive run cannot ask; allow with --allowedTools or --permission-mode"
    )
    if broken and mode != "plan":
        hint = (
            f"fix {', '.join(broken)}: while a settings file is broken every change asks, "
            "whatever --allowedTools or --permission-mode say"
        )
    lines = [
        f"lsp-agent: {len(denials)} tool call{'' if len(denials) == 1 else 's'} denied ({hint}):"
    ]
    for denial in denials:
        lines.append(f"  denied: {_describe_call(denial)}")
    return lines


def _describe_call(denial: dict[str, Any]) -> str:
    name = str(denial.get("tool_name") or "tool")
    raw = denial.get("tool_input")
    tool_input: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for key in ("command", "file_path", "path", "pattern", "url"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            if key == "file_path" and value.startswith("/") and not value.startswith("//"):
                # Written as the rule that allows it (an absolute path takes "//" in a rule,
                # as the tool's refusal says), so the line can be passed to --allowedTools.
                value = "/" + value
            shown = value if len(value) <= 120 else value[:119] + "…"
            return f"{name}({shown})"
    return name


class _ProgressLines:
    """One stderr line when a tool starts and one when it ends, with the best title known:
    ``[tool] Read money.py … in_progress`` / ``… completed``."""

    def __init__(self, *, err: TextIO) -> None:
        self._err = err
        self._titles: dict[str, str] = {}

    def show(self, event: Event) -> None:
        tool_id = str(event.get("tool_use_id"))
        if event.get("title"):
            self._titles[tool_id] = str(event["title"])
        status = event.get("status")
        if status not in ("in_progress", "completed", "failed"):
            return
        title = self._titles.get(tool_id) or event.get("tool_name") or tool_id
        if event.get("denied"):
            status = "denied"
        self._err.write(f"[tool] {title} … {status}\n")
        self._err.flush()


def make_renderer(
    output_format: str,
    *,
    out: TextIO,
    err: TextIO,
    verbose: bool,
    broken_settings: tuple[str, ...] = (),
) -> Renderer:
    """The renderer for ``output_format``; raises ``ValueError`` for an unknown one.
    ``broken_settings``: where the run's broken settings files first fail (``file:line:col``),
    named by text mode's denial trailer."""
    if output_format == "stream-json":
        return StreamJsonRenderer(out=out)
    if output_format == "json":
        return JsonRenderer(out=out, err=err, verbose=verbose)
    if output_format == "text":
        return TextRenderer(out=out, err=err, verbose=verbose, broken_settings=broken_settings)
    raise ValueError(f"unknown output format {output_format!r} (text, json, stream-json)")
