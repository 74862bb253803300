"""Transports to one MCP server, on the SDK's clients: stdio, streamable HTTP, legacy SSE.

What this adds to the SDK's transports:

* stdio children get the user's environment (``PATH`` above all, so ``npx``/``uvx`` servers
  start) minus this agent's own model credentials, plus the definition's ``env``; a command
  that is not on ``PATH`` is looked up again with the login shell's ``PATH`` joined
  (:mod:`.login_path`: an editor started from a desktop lacks it), then fails with an error
  naming it and the ``PATH`` searched;
* the child's stderr is captured (:class:`StderrTail`): each line goes to the log (up to a
  cap, so a flood cannot fill it) and the last lines are kept for the error shown when the
  server fails;
* every transport reports when its connection ended (``lost``), so the connection can restart
  a crashed server instead of waiting for the next call to fail.

Imports the ``mcp`` SDK: only reached once a server is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from lsp_agent.mcp.config import ServerSpec
from lsp_agent.mcp.login_path import LoginPath, joined_path

log = logging.getLogger(__name__)

WITHHELD_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""The agent's own model credentials: not passed to MCP servers unless their ``env`` sets them."""

STDERR_TAIL_LINES = 40
"""How many of a server's last stderr lines are kept for error messages."""

STDERR_LOGGED_LINES = 500
"""How many stderr lines per start of a server are copied to the log; the rest are counted."""

STDERR_LINE_CHARS = 2000
"""Longest stderr line kept or logged (characters); longer lines are cut."""

HTTP_TIMEOUT_S = 30.0
"""Connect/write/pool timeout of HTTP transports (seconds; the SDK's default)."""

HTTP_READ_TIMEOUT_S = 300.0
"""Read timeout of HTTP transports (seconds): a server may hold a response stream open."""


class StderrTail:
    """A server's stderr: logged line by line (bounded), the last lines kept."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.lines: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self.logged = 0
        self.dropped = 0
        self._partial = ""

    def feed(self, chunk: str) -> None:
        """Take a chunk of stderr text (any size, possibly without a line end)."""
        text = self._partial + chunk
        *complete, self._partial = text.split("\n")
        if len(self._partial) > STDERR_LINE_CHARS:
            complete.append(self._partial)
            self._partial = ""
        for line in complete:
            self._line(line.rstrip("\r")[:STDERR_LINE_CHARS])

    def flush(self) -> None:
        """Take the unterminated last line, if any."""
        if self._partial:
            self._line(self._partial[:STDERR_LINE_CHARS])
            self._partial = ""

    def _line(self, line: str) -> None:
        self.lines.append(line)
        if self.logged < STDERR_LOGGED_LINES:
            self.logged += 1
            log.info("MCP server %s stderr: %s", self.server, line)
        else:
            self.dropped += 1

    def restarted(self) -> None:
        """A new process starts: the log cap applies afresh (the tail is kept)."""
        if self.dropped:
            log.info("MCP server %s: %d more stderr lines not logged", self.server, self.dropped)
        self.logged = self.dropped = 0

    def text(self) -> str:
        """The kept lines, oldest first."""
        return "\n".join(self.lines)


def child_environment(spec: ServerSpec, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of a stdio server: ``environ`` without :data:`WITHHELD_ENV`, then the
    definition's ``env``."""
    env = {k: v for k, v in environ.items() if k not in WITHHELD_ENV}
    env.update(dict(spec.env))
    return env


def resolve_command(spec: ServerSpec, env: Mapping[str, str], cwd: Path) -> str:
    """The executable to run for ``spec``: found on the child's ``PATH`` (or a path relative
    to the server's working directory). Raises ``FileNotFoundError`` naming the command and
    the ``PATH`` searched."""
    command = spec.command
    if os.sep in command or (os.altsep and os.altsep in command):
        candidate = (cwd / command) if not os.path.isabs(command) else Path(command)
        if candidate.is_file():
            return str(candidate)
        raise FileNotFoundError(f"command not found: {command} (no such file)")
    found = shutil.which(command, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(
            f"command not found: {command!r} is not on PATH ({env.get('PATH', '')}); "
            "install it or give its full path"
        )
    return found


def server_cwd(spec: ServerSpec, project: Path) -> Path:
    """The working directory of a stdio server: its ``cwd`` (relative to the project) or the
    project directory."""
    return (project / spec.cwd).resolve() if spec.cwd else project


@dataclass(kw_only=True)
class Opened:
    """An open transport: the streams the SDK's client drives and an event set when the
    connection ended (EOF from a stdio child, a closed HTTP stream)."""

    read: Any
    write: Any
    lost: asyncio.Event


async def _pump_stderr(fd: int, tail: StderrTail) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    pipe = os.fdopen(fd, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    try:
        while chunk := await reader.read(65536):
            tail.feed(chunk.decode("utf-8", "replace"))
        tail.flush()
    finally:
        transport.close()


async def _command(
    spec: ServerSpec, env: dict[str, str], cwd: Path, login_path: LoginPath | None
) -> str:
    """:func:`resolve_command`, retried with the login shell's ``PATH`` joined to ``env``'s
    (which then becomes the child's) when the command is not on ``PATH``."""
    try:
        return resolve_command(spec, env, cwd)
    except FileNotFoundError:
        if login_path is None or os.sep in spec.command:
            raise
        theirs = await login_path.path()
        if theirs is None:
            raise
        env["PATH"] = joined_path(env.get("PATH", ""), theirs)
        return resolve_command(spec, env, cwd)


@contextlib.asynccontextmanager
async def _stdio(
    spec: ServerSpec,
    *,
    project: Path,
    environ: Mapping[str, str],
    tail: StderrTail,
    login_path: LoginPath | None,
) -> AsyncIterator[tuple[Any, Any]]:
    env = child_environment(spec, environ)
    cwd = server_cwd(spec, project)
    command = await _command(spec, env, cwd, login_path)
    params = StdioServerParameters(
        command=command,
        args=list(spec.args),
        env=env,
        cwd=cwd,
        encoding_error_handler="replace",
    )
    read_fd, write_fd = os.pipe()
    errlog = os.fdopen(write_fd, "w")
    pump: asyncio.Task[None] | None = None
    try:
        async with stdio_client(params, errlog=errlog) as streams:
            errlog.close()  # the child holds its own copy: EOF comes when it exits
            pump = asyncio.ensure_future(_pump_stderr(read_fd, tail))
            read_fd = -1
            yield streams
    finally:
        errlog.close()
        if read_fd >= 0:
            os.close(read_fd)
        if pump is not None:
            # The child is gone (the SDK's shutdown waited for it): drain what it wrote last.
            with contextlib.suppress(TimeoutError, asyncio.CancelledError, OSError):
                await asyncio.wait_for(asyncio.shield(pump), 1.0)
            pump.cancel()


@contextlib.asynccontextmanager
async def open_transport(
    spec: ServerSpec,
    *,
    project: Path,
    environ: Mapping[str, str],
    tail: StderrTail,
    login_path: LoginPath | None = None,
    auth: httpx2.Auth | None = None,
) -> AsyncIterator[Opened]:
    """Open the transport of ``spec``; ``project`` is the project directory (absolute);
    ``login_path`` supplies the login shell's ``PATH`` for a stdio command not on ours;
    ``auth`` authenticates the requests of an HTTP or SSE server (OAuth, :mod:`.oauth`).

    Raises ``FileNotFoundError`` for a stdio command that cannot be found and ``OSError``
    when it cannot be started; HTTP errors surface at the first request.
    """
    lost = asyncio.Event()
    async with contextlib.AsyncExitStack() as stack:
        if spec.transport == "stdio":
            read, write = await stack.enter_async_context(
                _stdio(spec, project=project, environ=environ, tail=tail, login_path=login_path)
            )
        elif spec.transport == "http":
            client = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=dict(spec.headers),
                    timeout=httpx2.Timeout(HTTP_TIMEOUT_S, read=HTTP_READ_TIMEOUT_S),
                    auth=auth,
                )
            )
            read, write = await stack.enter_async_context(
                streamable_http_client(spec.url, http_client=client)
            )
        else:
            read, write = await stack.enter_async_context(
                sse_client(
                    spec.url,
                    headers=dict(spec.headers),
                    timeout=HTTP_TIMEOUT_S,
                    sse_read_timeout=HTTP_READ_TIMEOUT_S,
                    auth=auth,
                )
            )
        relay_send, relay_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            try:
                async with relay_send:
                    async for item in read:
                        await relay_send.send(item)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
            finally:
                lost.set()

        task_group = await stack.enter_async_context(anyio.create_task_group())
        task_group.start_soon(relay)
        try:
            yield Opened(read=relay_receive, write=write, lost=lost)
        finally:
            task_group.cancel_scope.cancel()
