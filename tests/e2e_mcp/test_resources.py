"""MCP resources against a real SDK server: the two resource tools and ``@server:uri``
mentions in a prompt."""

from __future__ import annotations

from typing import Any

from lsp_agent.mcp.mentions import parse_mentions
from lsp_agent.model.types import Message
from lsp_agent.tools.base import ToolError
from tests.e2e_mcp.conftest import stdio_entry
from tests.e2e_mcp.test_pool import by_name, call


async def test_resource_tools_list_and_read(make_pool: Any) -> None:
    pool = make_pool({"fx": stdio_entry()})
    tools = await pool.tools()
    listing = by_name(tools, "ListMcpResourcesTool")
    read = by_name(tools, "ReadMcpResourceTool")
    assert listing.read_only and read.read_only  # as in Claude Code: reading changes nothing
    listed = (await call(listing, {})).text
    assert '"uri": "test://notes/readme"' in listed and '"server": "fx"' in listed
    assert (await call(listing, {"server": "fx"})).text == listed
    out = await call(read, {"server": "fx", "uri": "test://notes/readme"})
    assert out.text == "Fixture read-me: the answer is 42."
    blob = await call(read, {"server": "fx", "uri": "test://blob"})
    assert "binary content (application/octet-stream" in blob.text
    try:
        await call(read, {"server": "nope", "uri": "test://notes/readme"})
    except ToolError as exc:
        assert "'nope' not found" in str(exc) and "fx" in str(exc)
    else:
        raise AssertionError("an unknown server was read")
    try:
        await call(read, {"server": "fx", "uri": "test://missing"})
    except ToolError as exc:
        assert "fx" in str(exc)
    else:
        raise AssertionError("a missing resource was read")


def test_mentions_name_configured_servers_only() -> None:
    text = "see @fx:test://a/b, and @home:8080 or mail@fx:test://x and @fx:test://a/b again"
    found = parse_mentions(text, {"fx"})
    assert [(m.server, m.uri) for m in found] == [("fx", "test://a/b")]
    assert parse_mentions("@other:test://a", {"fx"}) == []
    assert parse_mentions("(@fx:file:///tmp/x.md).", {"fx"}) == []  # must follow white space
    assert [m.uri for m in parse_mentions("read @fx:file:///tmp/x.md.", {"fx"})] == [
        "file:///tmp/x.md"
    ]


async def test_a_prompt_gets_the_mentioned_resources(tmp_path: Any) -> None:
    import json
    import os

    from lsp_agent.mcp.service import McpService
    from lsp_agent.mcp.sources import McpSources
    from tests.e2e_mcp.conftest import test_limits

    config = json.dumps({"mcpServers": {"fx": stdio_entry()}})
    sources = McpSources(
        cwd=tmp_path,
        home=tmp_path,
        trusted=True,
        environ=dict(os.environ),
        settings_files={},
        cli_configs=(config,),
    )
    service = McpService(sources=sources, limits=test_limits())
    try:
        prompt = Message.user_text(
            "Use @fx:test://notes/readme. Also @fx:test://missing and @nobody:test://x"
        )
        out = await service.with_resources(prompt)
        assert out.content[0] == prompt.content[0]
        attached = out.content[1].text  # type: ignore[union-attr]
        assert (
            '<mcp-resource server="fx" uri="test://notes/readme">\n'
            "Fixture read-me: the answer is 42.\n</mcp-resource>"
        ) in attached
        assert '<mcp-resource server="fx" uri="test://missing" error=' in attached
        assert "nobody" not in attached  # not a configured server: plain text
        plain = Message.user_text("no mentions here @fx:")
        assert await service.with_resources(plain) is plain
    finally:
        await service.aclose()
