"""Real MCP servers (the SDK's ``MCPServer``, ``tests/mcp_servers/fixture_server.py``) over
stdio and streamable HTTP on 127.0.0.1, and pools connected to them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.mcp.config import read_config_text
from lsp_agent.mcp.elicitation import AskFn
from lsp_agent.mcp.limits import McpLimits
from lsp_agent.mcp.pool import McpPool
from lsp_agent.mcp.sources import McpPlan, PlannedServer

FIXTURE = Path(__file__).resolve().parents[1] / "mcp_servers" / "fixture_server.py"

START_WAIT_S = 60.0
"""Generous bound for a server to come up under load (never a timing assertion)."""


def stdio_entry(*flags: str, **extra: Any) -> dict[str, Any]:
    """A stdio definition running the fixture server with ``flags``."""
    return {"command": sys.executable, "args": [str(FIXTURE), *flags], **extra}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http(port: int, flag: str = "--http") -> subprocess.Popen[bytes]:
    """Start the fixture server on 127.0.0.1:``port`` (``--http`` or ``--sse``) and wait until
    it accepts connections."""
    argv = [sys.executable, str(FIXTURE), flag, str(port), "--name", "web"]
    return start_listening(argv, port, what="the HTTP fixture server")


def start_listening(argv: list[str], port: int, *, what: str) -> subprocess.Popen[bytes]:
    """Start ``argv`` and wait until it accepts connections on 127.0.0.1:``port``; raises
    ``RuntimeError`` naming ``what`` when it exits or does not listen in time."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + START_WAIT_S
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                stop(proc)
                raise RuntimeError(f"{what} did not start") from None
            time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a fixture server process (bounded)."""
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:  # uvicorn waits for open streams to close
        proc.kill()
        proc.wait(10)


@pytest.fixture
def http_server() -> Iterator[str]:
    """The fixture server on streamable HTTP; yields its URL."""
    port = free_port()
    proc = start_http(port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


def plan_of(servers: dict[str, Any]) -> McpPlan:
    """Every server of ``servers`` (an mcpServers value) enabled."""
    file = read_config_text(
        json.dumps({"mcpServers": servers}), path=None, scope="cli", environ=os.environ
    )
    assert file.problems == ()
    return McpPlan(servers=tuple(PlannedServer(spec=s, status="enabled") for s in file.servers))


def test_limits(**overrides: Any) -> McpLimits:
    base: dict[str, Any] = dict(
        startup_timeout_s=START_WAIT_S,
        first_turn_wait_s=START_WAIT_S,
        backoff_initial_s=0.05,
        restart_attempts=2,
        refresh_interval_s=0.05,
    )
    base.update(overrides)
    return McpLimits(**base)


@pytest.fixture
async def make_pool(tmp_path: Path) -> AsyncIterator[Any]:
    pools: list[McpPool] = []

    def make(
        servers: dict[str, Any],
        *,
        environ: dict[str, str] | None = None,
        ask: AskFn | None = None,
        **limits: Any,
    ) -> McpPool:
        pool = McpPool(
            plan=plan_of(servers),
            limits=test_limits(**limits),
            project=tmp_path,
            environ=os.environ if environ is None else environ,
            roots=lambda: (tmp_path,),
            ask=ask,
        )
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        await pool.aclose()
