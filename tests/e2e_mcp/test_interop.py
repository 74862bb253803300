"""Servers nobody here wrote, installed from the package registries: the reference
"everything" server (npm, tests/mcp_servers/interop) and ``mcp-server-time`` (PyPI)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from lsp_agent.tools.base import ToolError
from tests.e2e_mcp.test_pool import _Ctx, by_name, call

EVERYTHING = (
    Path(__file__).resolve().parents[1]
    / "mcp_servers"
    / "interop"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)


def everything() -> dict[str, Any]:
    assert EVERYTHING.is_file(), "run `make test` (it installs tests/mcp_servers/interop)"
    return {"command": "node", "args": [str(EVERYTHING), "stdio"]}


async def test_the_everything_server(make_pool: Any, tmp_path: Path) -> None:
    pool = make_pool({"everything": everything()})
    tools = await pool.tools()
    out = await call(by_name(tools, "mcp__everything__echo"), {"message": "hi"})
    assert "hi" in out.text and not out.is_error
    assert "3" in (await call(by_name(tools, "mcp__everything__get-sum"), {"a": 1, "b": 2})).text
    ctx = _Ctx()
    done = await call(
        by_name(tools, "mcp__everything__trigger-long-running-operation"),
        {"duration": 1, "steps": 3},
        ctx,
    )
    assert not done.is_error and len(ctx.progress_lines) == 3
    image = await call(by_name(tools, "mcp__everything__get-tiny-image"), {})
    # The image reaches the model as an image block; the text names it.
    assert "[image (png, " in image.text
    assert [i.media_type for i in image.images] == ["image/png"]
    structured = await call(
        by_name(tools, "mcp__everything__get-structured-content"), {"location": "Chicago"}
    )
    assert "temperature" in structured.text.lower()
    links = await call(by_name(tools, "mcp__everything__get-resource-links"), {"count": 2})
    assert links.text.count("[resource link") == 2
    roots = await call(by_name(tools, "mcp__everything__get-roots-list"), {})
    assert tmp_path.as_uri() in roots.text  # the workspace folders are the roots
    elicit = await call(by_name(tools, "mcp__everything__trigger-elicitation-request"), {})
    assert "decline" in elicit.text.lower()  # nobody to ask (no editor): declined
    assert "everything" in pool.instructions()
    # Resources and prompts of a server nobody here wrote.
    listed = (await call(by_name(tools, "ListMcpResourcesTool"), {})).text
    assert '"server": "everything"' in listed
    uri = json.loads(listed)[0]["uri"]
    read = await call(by_name(tools, "ReadMcpResourceTool"), {"server": "everything", "uri": uri})
    assert read.text and not read.is_error
    from lsp_agent.mcp.prompts import prompt_commands

    commands = prompt_commands(pool.connections)
    assert commands and all(c.name.startswith("mcp__everything__") for c in commands)


async def test_mcp_server_time_from_pypi(make_pool: Any) -> None:
    command = Path(sys.executable).parent / "mcp-server-time"
    pool = make_pool({"time": {"command": str(command)}})
    tools = await pool.tools()
    out = await call(by_name(tools, "mcp__time__get_current_time"), {"timezone": "Etc/UTC"})
    assert "Etc/UTC" in out.text and not out.is_error
    bad = await call(by_name(tools, "mcp__time__get_current_time"), {"timezone": "Mars/Base"})
    assert bad.is_error


async def test_bad_arguments_to_a_foreign_server_are_a_tool_error(make_pool: Any) -> None:
    pool = make_pool({"everything": everything()})
    tools = await pool.tools()
    try:
        out = await call(by_name(tools, "mcp__everything__get-sum"), {"a": "x"})
    except ToolError as exc:  # a protocol error (invalid params) is a tool error too
        assert "everything" in str(exc)
    else:
        assert out.is_error
