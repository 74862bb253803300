#!/usr/bin/env python3
"""MCP client costs, against real SDK servers (tests/mcp_servers/fixture_server.py).

``call``
    Per-call overhead: ``--calls`` sequential calls of the fixture's ``echo`` tool over stdio,
    through lsp-agent's tool adapter (``McpTool.call``: pool, connection, result conversion,
    cap) and directly through the SDK's ``mcp.Client.call_tool`` on the same kind of server.
    Goal: ours <= 1.2 x the SDK's.
``startup``
    Time from creating the pool to the first turn's tool list with three servers, one of which
    never answers (``--hang``): the two healthy servers' tools must be offered without waiting
    for the slow one (the turn waits at most ``first_turn_wait_s``, here 0: a turn started when
    the healthy ones are ready). Reported: time until both healthy servers are ready, and
    whether the slow one was still starting then.

Prints a Markdown table; ``--json OUT`` also writes the figures.

    python tools/bench_mcp.py [--calls 300] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

FIXTURE = REPO / "tests" / "mcp_servers" / "fixture_server.py"


def _plan(servers: dict[str, Any]) -> Any:
    from lsp_agent.mcp.config import read_config_text
    from lsp_agent.mcp.sources import McpPlan, PlannedServer

    file = read_config_text(
        json.dumps({"mcpServers": servers}), path=None, scope="cli", environ=os.environ
    )
    return McpPlan(servers=tuple(PlannedServer(spec=s, status="enabled") for s in file.servers))


def _entry(*flags: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FIXTURE), *flags]}


class _Ctx:
    def progress(self, text: str) -> None:
        pass


async def bench_ours(calls: int) -> float:
    """Mean seconds per call through lsp-agent's adapter."""
    from lsp_agent.mcp.limits import McpLimits
    from lsp_agent.mcp.pool import McpPool

    pool = McpPool(
        plan=_plan({"fx": _entry()}),
        limits=McpLimits(first_turn_wait_s=60),
        project=REPO,
        environ=os.environ,
    )
    try:
        tools = await pool.tools()
        echo = next(t for t in tools if t.name == "mcp__fx__echo")
        ctx: Any = _Ctx()
        inp = echo.parse({"text": "x"})
        prepared = await echo.prepare(inp, ctx)
        for _ in range(10):  # warm-up
            await echo.call(inp, prepared, ctx)
        start = time.perf_counter()
        for _ in range(calls):
            await echo.call(inp, prepared, ctx)
        return (time.perf_counter() - start) / calls
    finally:
        await pool.aclose()


async def bench_sdk(calls: int) -> float:
    """Mean seconds per call through the SDK's client alone."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(FIXTURE)])
    async with Client(params, cache=None) as client:
        await client.list_tools()
        for _ in range(10):
            await client.call_tool("echo", {"text": "x"})
        start = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("echo", {"text": "x"})
        return (time.perf_counter() - start) / calls


async def bench_startup() -> dict[str, Any]:
    from lsp_agent.mcp.limits import McpLimits
    from lsp_agent.mcp.pool import McpPool

    pool = McpPool(
        plan=_plan({"a": _entry(), "b": _entry(), "slow": _entry("--hang")}),
        limits=McpLimits(startup_timeout_s=120, first_turn_wait_s=0),
        project=REPO,
        environ=os.environ,
    )
    start = time.perf_counter()
    pool.start()
    try:
        while True:
            states = {s.name: s.state for s in pool.statuses()}
            if states["a"] == "ready" and states["b"] == "ready":
                break
            await asyncio.sleep(0.005)
        ready_s = time.perf_counter() - start
        tools = await pool.tools(wait_s=0)
        return {
            "healthy_ready_s": ready_s,
            "tools_offered": len(tools),
            "slow_state_then": {s.name: s.state for s in pool.statuses()}["slow"],
        }
    finally:
        await pool.aclose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    ours = [asyncio.run(bench_ours(args.calls)) for _ in range(args.repeat)]
    sdk = [asyncio.run(bench_sdk(args.calls)) for _ in range(args.repeat)]
    startup = [asyncio.run(bench_startup()) for _ in range(args.repeat)]
    ours_ms = statistics.median(ours) * 1000
    sdk_ms = statistics.median(sdk) * 1000
    ready = statistics.median(s["healthy_ready_s"] for s in startup)
    print("| measure | value |")
    print("| --- | --- |")
    print(
        f"| per call, SDK `Client.call_tool` (stdio, median of {args.repeat}) | {sdk_ms:.2f} ms |"
    )
    print(f"| per call, lsp-agent `mcp__fx__echo` | {ours_ms:.2f} ms |")
    print(f"| ratio | {ours_ms / sdk_ms:.2f}x |")
    print(f"| 3 servers, one never answers: both healthy ready after | {ready:.2f} s |")
    print(
        f"| tools offered then / slow server's state | {startup[0]['tools_offered']} / "
        f"{startup[0]['slow_state_then']} |"
    )
    if args.json:
        args.json.write_text(
            json.dumps({"ours_ms": ours_ms, "sdk_ms": sdk_ms, "startup": startup}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
