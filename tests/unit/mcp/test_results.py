"""Tool results: content kinds to text, the output cap."""

from __future__ import annotations

import mcp_types as types

from lsp_agent.mcp.limits import McpLimits, limits_from_env
from lsp_agent.mcp.results import cap_text, result_text


def test_content_kinds_become_text() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="hello"),
            types.ImageContent(type="image", data="aGVsbG8=", mime_type="image/png"),
            types.ResourceLink(type="resource_link", name="doc", uri="file:///doc.md"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="file:///a.txt", text="inside"),
            ),
        ]
    )
    text = result_text(result)
    assert "hello" in text
    assert "[image image/png" in text
    assert "file:///doc.md" in text
    assert '<resource uri="file:///a.txt">\ninside' in text


def test_structured_content_is_shown_when_there_is_no_text() -> None:
    result = types.CallToolResult(content=[], structured_content={"n": 3})
    assert '"n": 3' in result_text(result)
    assert result_text(types.CallToolResult(content=[])) == "(no output)"


def test_cap_cuts_with_a_notice() -> None:
    limits = McpLimits(max_output_tokens=10, warn_output_tokens=5)
    assert cap_text("short", limits=limits, tool="t") == "short"
    out = cap_text("y" * 1000, limits=limits, tool="mcp__s__t")
    assert out.startswith("y" * 40) and "y" * 41 not in out
    assert "Output truncated" in out and "MAX_MCP_OUTPUT_TOKENS" in out


def test_limits_from_env_use_claude_codes_units_and_reject_garbage() -> None:
    limits = limits_from_env(
        {"MCP_TIMEOUT": "5000", "MCP_TOOL_TIMEOUT": "1500", "MAX_MCP_OUTPUT_TOKENS": "100"}
    )
    assert (limits.startup_timeout_s, limits.tool_timeout_s) == (5.0, 1.5)
    assert limits.max_output_tokens == 100
    assert limits_from_env({"MCP_TIMEOUT": "soon"}).startup_timeout_s == 30.0
    assert limits_from_env({"MCP_TIMEOUT": "-1"}).startup_timeout_s == 30.0
