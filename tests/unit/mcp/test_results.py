"""Tool results: content kinds to text, the output cap."""

from __future__ import annotations

import base64
import struct

import mcp_types as types

from lsp_agent.mcp.limits import McpLimits, limits_from_env
from lsp_agent.mcp.results import cap_text, convert_result, result_text


def test_content_kinds_become_text() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="hello"),
            types.ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
            types.ResourceLink(type="resource_link", name="doc", uri="file:///doc.md"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="file:///a.txt", text="inside"),
            ),
        ]
    )
    text = result_text(result)
    assert "hello" in text
    assert "[image (png, 8 bytes)]" in text
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


def _png_b64(width: int, height: int) -> str:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0" * 34990
    return base64.b64encode(raw).decode()


def test_images_become_blocks_and_audio_a_note() -> None:
    data = _png_b64(300, 200)
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="a chart:"),
            types.ImageContent(type="image", data=data, mime_type="image/png"),
            types.ImageContent(type="image", data="PHN2Zz4=", mime_type="image/svg+xml"),
            types.AudioContent(type="audio", data="AAAA" * 3000, mime_type="audio/wav"),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(
                    uri="file:///c.png", blob=data, mime_type="image/png"
                ),
            ),
        ]
    )
    out = convert_result(result, limits=McpLimits(), tool="mcp__s__chart")
    assert [i.media_type for i in out.images] == ["image/png", "image/png"]
    assert out.images[0].data == data
    assert "a chart:\n[image (png, 34 KB)]" in out.text
    assert "[image (svg+xml, 5 bytes): not a type the model can view, not shown]" in out.text
    assert "[audio (wav, 9 KB): the model cannot hear audio, not shown]" in out.text
    assert "[image (png, 34 KB) from file:///c.png]" in out.text
    assert data not in out.text


def test_images_count_by_their_pixels_under_the_cap() -> None:
    small = _png_b64(75, 100)  # 10 tokens
    result = types.CallToolResult(
        content=[
            types.ImageContent(type="image", data=small, mime_type="image/png"),
            types.ImageContent(type="image", data=small, mime_type="image/png"),
        ]
    )
    limits = McpLimits(max_output_tokens=25, warn_output_tokens=5)
    out = convert_result(result, limits=limits, tool="t")
    assert len(out.images) == 1
    assert "1 of 2 images left out" in out.text and "MAX_MCP_OUTPUT_TOKENS" in out.text
    roomy = convert_result(result, limits=McpLimits(), tool="t")
    assert len(roomy.images) == 2 and "left out" not in roomy.text


def test_structured_content_only_when_no_text_and_links_name_their_uri() -> None:
    result = types.CallToolResult(
        content=[types.ResourceLink(type="resource_link", name="log", uri="test://log")],
        structured_content={"rows": 2},
    )
    out = convert_result(result, limits=McpLimits(), tool="t")
    assert "[resource link log: test://log]" in out.text and '"rows": 2' in out.text
    with_text = types.CallToolResult(
        content=[types.TextContent(type="text", text="2 rows")], structured_content={"rows": 2}
    )
    assert convert_result(with_text, limits=McpLimits(), tool="t").text == "2 rows"
