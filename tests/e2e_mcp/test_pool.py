"""The MCP client against real SDK servers: tools, calls, progress, list changes, and the
fault matrix (garbage, crashes, hangs, floods, huge results, shadowing names)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.mcp.pool import McpPool
from lsp_agent.tools.base import Tool, ToolError
from tests.e2e_mcp.conftest import START_WAIT_S, free_port, start_http, stdio_entry, stop


class _Ctx:
    """The parts of a ToolContext an MCP tool uses (progress)."""

    def __init__(self) -> None:
        self.progress_lines: list[str] = []

    def progress(self, text: str) -> None:
        self.progress_lines.append(text)


def by_name(tools: list[Tool[Any, Any]], name: str) -> Tool[Any, Any]:
    return next(t for t in tools if t.name == name)


async def call(tool: Tool[Any, Any], args: dict[str, Any], ctx: _Ctx | None = None) -> Any:
    inp = tool.parse(args)
    prepared = await tool.prepare(inp, ctx or _Ctx())  # type: ignore[arg-type]
    return await tool.call(inp, prepared, ctx or _Ctx())  # type: ignore[arg-type]


async def wait_state(pool: McpPool, name: str, state: str) -> None:
    for _ in range(int(START_WAIT_S * 20)):
        if any(s.name == name and s.state == state for s in pool.statuses()):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} never reached {state}: {pool.statuses()}")


async def test_stdio_tools_are_offered_sorted_and_called(make_pool: Any) -> None:
    pool = make_pool({"fx": stdio_entry()})
    tools = await pool.tools()
    names = [t.name for t in tools]
    assert names == sorted(names) and "mcp__fx__echo" in names
    # A server tool called "Bash" stays behind its prefix: it cannot shadow the built-in.
    assert "Bash" not in names and "mcp__fx__Bash" in names
    echo = by_name(tools, "mcp__fx__echo")
    assert echo.read_only is False  # hints never make a tool read-only for permissions
    assert echo.concurrency_safe is True  # ...but do let it run alongside others
    assert echo.spec().input_schema["type"] == "object"
    out = await call(echo, {"text": "hi"})
    assert (out.text, out.is_error) == ("echo: hi", False)
    assert (await call(by_name(tools, "mcp__fx__add"), {"a": 2, "b": 3})).text == "5"
    failed = await call(by_name(tools, "mcp__fx__fail"), {})
    assert failed.is_error and "always fails" in failed.text
    bad_args = await call(by_name(tools, "mcp__fx__add"), {"a": "x"})
    assert bad_args.is_error
    status = next(s for s in pool.statuses() if s.name == "fx")
    server_tools = [t for t in tools if t.name.startswith("mcp__")]
    assert status.state == "ready" and status.tools == len(server_tools)
    assert pool.instructions() == {"fx": "The fixture server echoes and adds."}


async def test_http_server_works_the_same(make_pool: Any, http_server: str) -> None:
    pool = make_pool({"web": {"type": "http", "url": http_server, "headers": {"X-Test": "1"}}})
    tools = await pool.tools()
    out = await call(by_name(tools, "mcp__web__echo"), {"text": "over http"})
    assert out.text == "echo: over http"


async def test_legacy_sse_server(make_pool: Any) -> None:
    port = free_port()
    proc = start_http(port, "--sse")
    try:
        pool = make_pool({"old": {"type": "sse", "url": f"http://127.0.0.1:{port}/sse"}})
        out = await call(by_name(await pool.tools(), "mcp__old__echo"), {"text": "over sse"})
        assert out.text == "echo: over sse"
        await pool.aclose()
    finally:
        stop(proc)


async def test_an_http_server_that_goes_away_is_reconnected(make_pool: Any) -> None:
    port = free_port()
    proc = start_http(port)
    try:
        pool = make_pool(
            {"web": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}},
            restart_attempts=10,  # backoff 0.5 s doubling: minutes of retries, ample for a restart
            backoff_initial_s=0.5,
        )
        echo = by_name(await pool.tools(), "mcp__web__echo")
        assert (await call(echo, {"text": "1"})).text == "echo: 1"
        stop(proc)
        with pytest.raises(ToolError) as err:
            await call(echo, {"text": "2"})
        assert "web" in str(err.value)
        assert pool.statuses()[0].state != "ready"
        proc = start_http(port)  # the server comes back: the backoff loop reconnects
        await wait_state(pool, "web", "ready")
        assert (await call(echo, {"text": "3"})).text == "echo: 3"
    finally:
        stop(proc)


async def test_progress_reaches_the_tool_call(make_pool: Any) -> None:
    pool = make_pool({"fx": stdio_entry()})
    ctx = _Ctx()
    out = await call(by_name(await pool.tools(), "mcp__fx__progress"), {"steps": 3}, ctx)
    assert out.text == "progress done"
    assert ctx.progress_lines == ["[1/3] step 1\n", "[2/3] step 2\n", "[3/3] step 3\n"]


async def test_list_changed_refreshes_the_tools(make_pool: Any) -> None:
    pool = make_pool({"fx": stdio_entry()})
    tools = await pool.tools()
    assert "mcp__fx__grown" not in [t.name for t in tools]
    await call(by_name(tools, "mcp__fx__grow"), {})
    for _ in range(int(START_WAIT_S * 20)):
        if "mcp__fx__grown" in [t.name for t in await pool.tools()]:
            break
        await asyncio.sleep(0.05)
    grown = by_name(await pool.tools(), "mcp__fx__grown")
    assert (await call(grown, {})).text == "grown result"


async def test_a_list_changed_flood_is_contained(make_pool: Any) -> None:
    pool = make_pool({"fx": stdio_entry()})
    tools = await pool.tools()
    assert (await call(by_name(tools, "mcp__fx__churn"), {"times": 200})).text == "churned"
    echo = by_name(await pool.tools(), "mcp__fx__echo")
    assert (await call(echo, {"text": "still here"})).text == "echo: still here"


async def test_garbage_on_stdout_and_a_stderr_flood_are_tolerated(make_pool: Any) -> None:
    pool = make_pool({"fx": stdio_entry("--garbage", "--flood-stderr", "5000")})
    tools = await pool.tools()
    assert (await call(by_name(tools, "mcp__fx__echo"), {"text": "ok"})).text == "echo: ok"
    connection = pool.connections["fx"]
    assert connection.garbage_lines >= 1
    assert len(connection.stderr.lines) <= 40  # only a tail is kept


async def test_a_server_that_cannot_start_reports_its_stderr(make_pool: Any) -> None:
    pool = make_pool({"dead": stdio_entry("--die"), "fx": stdio_entry()}, restart_attempts=0)
    tools = await pool.tools()
    assert "mcp__fx__echo" in [t.name for t in tools]  # the other server is unaffected
    await wait_state(pool, "dead", "failed")
    status = next(s for s in pool.statuses() if s.name == "dead")
    assert "missing FIXTURE_CONFIG" in (status.error or "")


async def test_a_command_not_on_path_is_named(make_pool: Any) -> None:
    pool = make_pool({"nope": {"command": "no-such-mcp-server-binary"}}, restart_attempts=0)
    await pool.tools()
    await wait_state(pool, "nope", "failed")
    error = next(s for s in pool.statuses() if s.name == "nope").error or ""
    assert "no-such-mcp-server-binary" in error and "PATH" in error


async def test_a_server_that_never_answers_times_out(make_pool: Any) -> None:
    pool = make_pool({"hang": stdio_entry("--hang")}, startup_timeout_s=2, restart_attempts=0)
    assert await pool.tools(wait_s=START_WAIT_S) == []
    await wait_state(pool, "hang", "failed")
    error = next(s for s in pool.statuses() if s.name == "hang").error or ""
    assert "MCP_TIMEOUT" in error


async def test_a_crash_mid_call_is_a_tool_error_and_the_server_restarts(make_pool: Any) -> None:
    pool = make_pool({"fx": stdio_entry()})
    tools = await pool.tools()
    with pytest.raises(ToolError) as err:
        await call(by_name(tools, "mcp__fx__crash"), {})
    assert "disconnected" in str(err.value) and "crashing on purpose" in str(err.value)
    await wait_state(pool, "fx", "ready")
    echo = by_name(await pool.tools(), "mcp__fx__echo")
    assert (await call(echo, {"text": "back"})).text == "echo: back"


async def test_a_slow_call_times_out_and_the_server_stays_usable(make_pool: Any) -> None:
    pool = make_pool({"fx": stdio_entry()}, tool_timeout_s=1)
    tools = await pool.tools()
    with pytest.raises(ToolError) as err:
        await call(by_name(tools, "mcp__fx__sleep"), {"seconds": 30})
    assert "MCP_TOOL_TIMEOUT" in str(err.value)
    assert (await call(by_name(tools, "mcp__fx__echo"), {"text": "x"})).text == "echo: x"


async def test_cancelling_a_call_cancels_it(make_pool: Any) -> None:
    pool = make_pool({"fx": stdio_entry()})
    tools = await pool.tools()
    task = asyncio.ensure_future(call(by_name(tools, "mcp__fx__sleep"), {"seconds": 30}))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await call(by_name(tools, "mcp__fx__echo"), {"text": "y"})).text == "echo: y"


async def test_huge_results_are_capped(make_pool: Any) -> None:
    pool = make_pool({"fx": stdio_entry()}, max_output_tokens=1000)
    out = await call(by_name(await pool.tools(), "mcp__fx__huge"), {"chars": 5_000_000})
    assert len(out.text) < 5000 and "Output truncated" in out.text


async def test_children_keep_path_but_not_the_model_credentials(make_pool: Any) -> None:
    environ = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-secret",
        "USER_TOOLCHAIN_HINT": "kept",
    }
    pool = make_pool({"fx": stdio_entry(env={"FROM_CONFIG": "yes"})}, environ=environ)
    env_tool = by_name(await pool.tools(), "mcp__fx__env")
    assert (await call(env_tool, {"name": "ANTHROPIC_API_KEY"})).text == "<unset>"
    assert (await call(env_tool, {"name": "USER_TOOLCHAIN_HINT"})).text == "kept"
    assert (await call(env_tool, {"name": "FROM_CONFIG"})).text == "yes"
    assert (await call(env_tool, {"name": "PATH"})).text == environ["PATH"]


async def test_a_slow_server_does_not_hold_back_the_others(make_pool: Any) -> None:
    pool = make_pool({"hang": stdio_entry("--hang"), "fx": stdio_entry()})
    pool.start()
    await wait_state(pool, "fx", "ready")
    tools = await pool.tools(wait_s=0)
    assert "mcp__fx__echo" in [t.name for t in tools]
    assert next(s for s in pool.statuses() if s.name == "hang").state == "starting"


async def test_stopping_the_pool_stops_the_children(make_pool: Any, tmp_path: Path) -> None:
    pool = make_pool({"fx": stdio_entry()})
    await pool.tools()
    await pool.aclose()
    assert pool.statuses()[0].state == "idle"
    assert sys.executable  # the SDK's shutdown reaped the child (else aclose would not return)


async def test_an_http_server_that_is_down_is_named_by_its_url(make_pool: Any) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens there
    pool = make_pool({"down": {"type": "http", "url": url + "?key=secret"}}, restart_attempts=0)
    await pool.tools()  # starts the servers
    await wait_state(pool, "down", "failed")
    error = next(s.error for s in pool.statuses() if s.name == "down") or ""
    assert f"({url})" in error and "secret" not in error
