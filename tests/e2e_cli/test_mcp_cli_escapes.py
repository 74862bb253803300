"""``lsp-agent mcp`` prints what a repository's ``.mcp.json`` and its servers say; none of it
may drive the user's terminal. A cloned repository's definition (or a server's error) holding
escape sequences, such as OSC 52 (which writes the clipboard in many terminals) or a line
erase that hides the text before it, is printed with those characters escaped."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e_cli.test_mcp_cli import mcp

HOSTILE = "https://docs.example/mcp\x1b]52;c;ZWNobyBoaQ==\x07\x1b[2K\x1b[1G\u202esafe"


def test_mcp_list_and_approve_print_no_control_characters(project: Path) -> None:
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"docs": {"type": "http", "url": HOSTILE}}})
    )
    for args in (("list",), ("approve", "docs"), ("deny", "docs")):
        result = mcp(project, *args)
        assert result.returncode == 0, result.stderr
        printed = result.stdout + result.stderr
        assert "docs" in printed
        for raw in ("\x1b", "\x07", "\u202e"):
            assert raw not in printed, (args, printed)
        assert "\\x1b]52;c;ZWNobyBoaQ==\\x07" in result.stdout, args
    # The JSON form escapes them as JSON does, and keeps the definition exact.
    listed = mcp(project, "list", "--json")
    assert "\x1b" not in listed.stdout
    assert json.loads(listed.stdout)[0]["description"] == f"http {HOSTILE}"


def test_the_printed_fix_for_a_name_that_looks_like_an_option_works(project: Path) -> None:
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"--help": {"command": "true"}, "-x": {"command": "true"}}})
    )
    listed = mcp(project, "list")
    assert "approve it: lsp-agent mcp approve -- --help" in listed.stdout
    assert "approve it: lsp-agent mcp approve -- -x" in listed.stdout
    approved = mcp(project, "approve", "--", "-x")
    assert approved.returncode == 0, approved.stderr
    assert "MCP server -x approved" in approved.stdout
