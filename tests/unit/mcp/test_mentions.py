"""The ``<mcp-resource>`` block the model reads: no HTML entities beyond ``&quot;``."""

from __future__ import annotations

from lsp_agent.mcp.mentions import Mention, resource_block


def test_an_error_reads_as_plain_text() -> None:
    mention = Mention(server="pics", uri="notes://nope?a=1&b=<2>")
    block = resource_block(mention, error="MCP server 'pics': Unknown resource \"nope\"")
    assert block == (
        '<mcp-resource server="pics" uri="notes://nope?a=1&b=<2>" '
        "error=\"MCP server 'pics': Unknown resource &quot;nope&quot;\" />"
    )


def test_contents_are_attached_unchanged() -> None:
    block = resource_block(Mention(server="fx", uri="test://a"), text="it's <fine> & done")
    assert (
        block == '<mcp-resource server="fx" uri="test://a">\nit\'s <fine> & done\n</mcp-resource>'
    )
