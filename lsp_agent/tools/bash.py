"""The ``Bash`` tool: run a shell command in the session's working directory.

The command runs as ``bash -c COMMAND`` (``sh`` where there is no bash) in its own process
group with stdin at ``/dev/null``; stdout and stderr are merged, streamed to the user as they
come and capped for the model. When the command ends, times out or the call is cancelled, the
whole process group is stopped, so nothing it started in the background survives it.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import ConfigDict, Field

from lsp_agent.protocol.events import ContentItem, TextContent, ToolKind
from lsp_agent.tools._files import model_safe
from lsp_agent.tools._proc import group_alive, kill_group_now, start_merged, stop_group
from lsp_agent.tools._schema import tidy_schema
from lsp_agent.tools.base import Prepared, Tool, ToolContext, ToolError, ToolInput, ToolOutput

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_MS = 120_000
"""Time limit of a command when the model gives none (milliseconds)."""

MAX_TIMEOUT_MS = 600_000
"""Larger ``timeout`` values are clamped to this (milliseconds)."""

MAX_OUTPUT_CHARS = 150_000
"""Output captured (characters): the head and the tail, the middle is dropped. The session's
tool-result budget (30,000 characters by default, ``BASH_MAX_OUTPUT_LENGTH``) then saves
larger output to a file and shows the model a preview (:mod:`lsp_agent.context.budgets`)."""

INLINE_CHARS = 30_000
"""Output shown to the model inline by default (characters)."""

PROGRESS_INTERVAL_S = 0.1
"""Streamed output is sent to the user at most this often (seconds)."""

KILL_GRACE_S = 1.0
"""Between SIGTERM and SIGKILL when stopping a command (seconds)."""

DRAIN_S = 1.0
"""How long to wait for the output pipe to close once the process group is gone (seconds);
only a process that left the group (``setsid``) can hold it open longer."""

_CHUNK = 65536
_TITLE_CHARS = 120

DESCRIPTION = f"""\
Executes a given bash command and returns its output (stdout and stderr merged).

Usage:
- The command runs in a new shell in the session's working directory; `cd`, variables and \
other shell state do not carry over to the next call. Prefer absolute paths.
- stdin is closed: interactive commands fail instead of waiting. Use non-interactive flags \
(e.g. `git commit -m`, `npm init -y`); git never prompts for credentials.
- timeout is in milliseconds: default {DEFAULT_TIMEOUT_MS} (2 minutes), max {MAX_TIMEOUT_MS} \
(10 minutes). On timeout the command and everything it started is killed.
- Processes the command leaves running in the background (`cmd &`) are stopped when it \
finishes; there is no background mode.
- Output longer than {INLINE_CHARS} characters is saved to a file: you get its head and tail \
and the file's path, which you can Read with offset and limit or Grep.
- A non-zero exit code is reported as an error together with the output.
- Always quote file paths that contain spaces with double quotes.
- Write a clear, concise description (5-10 words) of what the command does.
- Do not use Bash for what a dedicated tool does: use Glob (not find/ls) to find files, Grep \
(not grep/rg) to search contents, Read (not cat/head/tail) to read files, Edit/Write (not \
sed/awk/echo >) to change files.
- Chain dependent commands with '&&'; make independent calls in parallel instead."""


class BashInput(ToolInput):
    """Input of ``Bash`` (Claude Code's shape, without ``run_in_background``)."""

    model_config = ConfigDict(json_schema_extra=tidy_schema)

    command: str = Field(description="The command to execute")
    timeout: int | None = Field(
        default=None,
        ge=1,
        description=f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS})",
    )
    description: str | None = Field(
        default=None,
        description="Clear, concise description of what this command does in 5-10 words, in "
        "active voice. Examples: 'Lists files in current directory', 'Installs package "
        "dependencies'",
    )


class BashTool(Tool[BashInput]):
    """Run a shell command; see the module docstring.

    A non-zero exit or a timeout is a :class:`ToolOutput` with ``is_error=True`` (the model
    sees the output); :class:`ToolError` only when the command cannot start. ``raw_output``
    is ``{"exit_code", "timed_out", "truncated"}``. Cancellation kills the process group and
    re-raises ``CancelledError``.
    """

    name: ClassVar[str] = "Bash"
    description: ClassVar[str] = DESCRIPTION
    input_model: ClassVar[type[ToolInput]] = BashInput
    kind: ClassVar[ToolKind] = "execute"
    reads_disk: ClassVar[bool] = True
    writes_disk: ClassVar[bool] = True
    failure_cancels_siblings: ClassVar[bool] = True

    def title(self, inp: BashInput) -> str:
        """The command's first line, shortened."""
        return _short_command(inp.command)

    async def prepare(self, inp: BashInput, ctx: ToolContext) -> Prepared:
        """Check the command; the permission prompt shows it in full."""
        if not inp.command.strip():
            raise ToolError("command is empty; give a shell command to run.")
        return Prepared(
            title=_short_command(inp.command),
            content=(ContentItem(content=TextContent(text=inp.command)),),
        )

    async def call(self, inp: BashInput, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        """Run the command to its end, its timeout or cancellation."""
        timeout_ms = inp.timeout or DEFAULT_TIMEOUT_MS
        notes: list[str] = []
        if timeout_ms > MAX_TIMEOUT_MS:
            notes.append(f"(timeout {timeout_ms} ms exceeds the maximum; used {MAX_TIMEOUT_MS} ms)")
            timeout_ms = MAX_TIMEOUT_MS
        run = await _run(inp.command, cwd=ctx.cwd, timeout_s=timeout_ms / 1000, sink=ctx.progress)

        output = run.output.replace("\r\n", "\n").rstrip("\n")
        parts = [output] if output else []
        if run.timed_out:
            parts.append(f"Command timed out after {timeout_ms} ms")
        elif run.exit_code != 0:
            parts.append(
                f"Exit code {run.exit_code}"
                if run.exit_code > 0
                else f"Killed by signal {-run.exit_code}"
            )
        if run.stopped_background:
            parts.append("(background processes started by the command were stopped)")
        parts += notes
        text = model_safe("\n".join(parts) if parts else "(no output)")
        return ToolOutput(
            text=text,
            is_error=run.timed_out or run.exit_code != 0,
            content=(ContentItem(content=TextContent(text=model_safe(output))),) if output else (),
            raw_output={
                "exit_code": None if run.timed_out else run.exit_code,
                "timed_out": run.timed_out,
                "truncated": run.truncated,
            },
        )


def _short_command(command: str) -> str:
    first = command.strip().splitlines()[0] if command.strip() else ""
    more = first != command.strip()
    if len(first) > _TITLE_CHARS:
        first, more = first[:_TITLE_CHARS], True
    return first + ("…" if more else "")


def _shell() -> str:
    for candidate in ("/bin/bash", shutil.which("bash"), "/bin/sh"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return "sh"


@dataclass(kw_only=True)
class _Run:
    """What one run produced (``exit_code`` negative for a signal, as in :mod:`subprocess`)."""

    output: str = ""
    exit_code: int = 0
    timed_out: bool = False
    truncated: bool = False
    stopped_background: bool = False


class _HeadTail:
    """Keeps the first and last ``limit // 2`` characters of a stream, counting the rest."""

    def __init__(self, limit: int) -> None:
        self._head_max = limit // 2
        self._tail_max = limit - self._head_max
        self._head: list[str] = []
        self._head_len = 0
        self._tail = ""
        self._total = 0

    def add(self, text: str) -> None:
        self._total += len(text)
        room = self._head_max - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += min(room, len(text))
            text = text[room:]
        if text:
            self._tail = (self._tail + text)[-self._tail_max :]

    @property
    def truncated(self) -> bool:
        return self._total > self._head_len + len(self._tail)

    def render(self) -> str:
        head = "".join(self._head)
        if not self.truncated:
            return head + self._tail
        dropped = self._total - self._head_len - len(self._tail)
        return f"{head}\n\n... [{dropped} characters of output truncated] ...\n\n{self._tail}"


class _Progress:
    """Batches streamed output for ``sink``: complete lines at most every interval; a partial
    line once it stopped growing for a whole interval (a prompt, a progress bar)."""

    def __init__(self, sink: Callable[[str], None]) -> None:
        self._sink = sink
        self._pending = ""
        self._grew = False

    def add(self, text: str) -> None:
        self._pending += text
        self._grew = True

    def tick(self) -> None:
        cut = self._pending.rfind("\n") + 1
        if cut == 0 and not self._grew:
            cut = len(self._pending)
        self._grew = False
        if cut:
            self._send(self._pending[:cut])
            self._pending = self._pending[cut:]

    def flush(self) -> None:
        if self._pending:
            self._send(self._pending)
            self._pending = ""

    def _send(self, text: str) -> None:
        try:
            self._sink(model_safe(text))
        except Exception:  # a display problem must not break the command
            log.exception("Bash progress callback failed")

    async def run(self) -> None:
        while True:
            await asyncio.sleep(PROGRESS_INTERVAL_S)
            self.tick()


SECRET_ENV = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"})
"""Environment variables removed from the commands' environment."""


async def _run(command: str, *, cwd: Path, timeout_s: float, sink: Callable[[str], None]) -> _Run:
    # The agent's own model credentials are not the command's business: a prompt-injected
    # command must not be able to read them.
    env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
    # Never wait for a credential prompt or a pager: stdin is closed and nobody would answer.
    env.update({"GIT_TERMINAL_PROMPT": "0", "PAGER": "cat", "GIT_PAGER": "cat"})
    if not cwd.is_dir():
        raise ToolError(f"The working directory {cwd} does not exist; the command was not run.")
    try:
        started = await start_merged([_shell(), "-c", command], cwd=cwd, env=env)
    except OSError as exc:
        raise ToolError(f"Could not start the shell: {exc}") from None
    proc, output = started.proc, started.output
    run = _Run()
    capture = _HeadTail(MAX_OUTPUT_CHARS)
    progress = _Progress(sink)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")

    async def pump() -> None:
        while chunk := await output.read(_CHUNK):
            text = decoder.decode(chunk)
            capture.add(text)
            progress.add(text)
        rest = decoder.decode(b"", final=True)
        capture.add(rest)
        progress.add(rest)

    pump_task = asyncio.create_task(pump())
    ticker = asyncio.create_task(progress.run())
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout_s)
        except TimeoutError:
            run.timed_out = True
        else:
            # The shell is gone; anything left in its group was started in the background.
            run.stopped_background = group_alive(proc)
        await stop_group(proc, grace_s=KILL_GRACE_S)
        # Only a process that left the group (setsid) can keep the pipe open now.
        _done, pending = await asyncio.wait({pump_task}, timeout=DRAIN_S)
        for task in pending:
            task.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), DRAIN_S)
    except BaseException:
        # Cancelled (or failed) mid-run: kill at once, without awaiting anything.
        kill_group_now(proc)
        pump_task.cancel()
        raise
    finally:
        ticker.cancel()
        started.transport.close()
    progress.flush()
    run.exit_code = proc.returncode if proc.returncode is not None else -9
    run.output = capture.render()
    run.truncated = capture.truncated
    return run
