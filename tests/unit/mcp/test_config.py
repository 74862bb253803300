"""MCP server definitions: Claude Code's .mcp.json shape, ${VAR} expansion, positioned
problems."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_agent.mcp.config import definition_digest, read_config_file, read_config_text
from lsp_agent.mcp.expand import ExpansionError, expand

ENV = {"HOME": "/home/u", "TOKEN": "s3cret", "EMPTY": ""}


def test_expand_plain_default_and_missing() -> None:
    assert expand("${HOME}/bin", ENV) == "/home/u/bin"
    assert expand("${NOPE:-fallback}", ENV) == "fallback"
    assert expand("${EMPTY:-fallback}", ENV) == "fallback"
    assert expand("${EMPTY}", ENV) == ""
    assert expand("$HOME and $(id)", ENV) == "$HOME and $(id)"  # nothing else expands
    with pytest.raises(ExpansionError) as err:
        expand("${A}${B}${A}", ENV)
    assert err.value.names == ("A", "B")


def test_stdio_http_and_sse_definitions_are_read_and_expanded() -> None:
    text = json.dumps(
        {
            "mcpServers": {
                "files": {
                    "command": "npx",
                    "args": ["-y", "srv", "${HOME}"],
                    "env": {"K": "${TOKEN}"},
                },
                "api": {
                    "type": "http",
                    "url": "https://api.example.com/${NOPE:-mcp}",
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                },
                "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            },
            "unknownTopLevel": 1,
        }
    )
    file = read_config_text(text, path=None, scope="project", environ=ENV)
    assert file.problems == ()
    files, api, old = file.servers
    assert (files.transport, files.command, files.args) == (
        "stdio",
        "npx",
        ("-y", "srv", "/home/u"),
    )
    assert files.env == (("K", "s3cret"),)
    assert (api.transport, api.url) == ("http", "https://api.example.com/mcp")
    assert api.headers == (("Authorization", "Bearer s3cret"),)
    assert "s3cret" not in repr(api)  # header values stay out of logs
    assert (old.transport, old.url) == ("sse", "http://127.0.0.1:9/sse")
    assert {s.scope for s in file.servers} == {"project"}


def test_problems_are_positioned_on_the_offending_value(tmp_path: Path) -> None:
    text = (
        '{\n  "mcpServers": {\n    "a": {"command": 7},\n'
        '    "b": {"type": "websocket", "url": "ws://x"},\n'
        '    "c": {"command": "x", "args": "not-a-list"},\n'
        '    "d": {"type": "http", "url": "ftp://x"},\n'
        '    "bad name": {"command": "x"},\n'
        '    "e": {"command": "${MISSING}"}\n  }\n}\n'
    )
    path = tmp_path / ".mcp.json"
    path.write_text(text)
    file = read_config_file(path, scope="project", environ=ENV)
    lines = {p.start[0]: p.message for p in file.problems}
    assert '"command" must be a non-empty string' in lines[2]
    assert '"type" must be' in lines[3]
    assert '"args" must be a list' in lines[4]
    assert "http:// or https://" in lines[5]
    assert "may only hold" in lines[6]
    assert "MISSING" in lines[7]
    assert all(p.path == path and p.severity == "error" for p in file.problems)
    # Only the server with an unset variable is kept, carrying why it cannot start.
    assert [(s.name, s.error) for s in file.servers] == [
        ("e", "environment variable not set: MISSING")
    ]


def test_broken_files_are_problems_not_exceptions(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text('{"mcpServers": {"a": ')
    file = read_config_file(path, scope="project", environ=ENV)
    assert file.servers == () and "invalid JSON" in file.problems[0].message
    path.write_bytes(b'{"mcpServers": {"\xff": {}}}')
    assert "not UTF-8" in read_config_file(path, scope="project", environ=ENV).problems[0].message
    path.write_text("[]")
    assert "JSON object" in read_config_file(path, scope="project", environ=ENV).problems[0].message
    path.write_text('{"mcpServers": []}')
    assert (
        "must be an object"
        in read_config_file(path, scope="project", environ=ENV).problems[0].message
    )
    assert read_config_file(tmp_path / "missing.json", scope="project", environ=ENV).exists is False
    path.write_text('{"servers": {"a": {"command": "x"}}}')  # VS Code's mcp.json shape
    problem = read_config_file(path, scope="project", environ=ENV).problems[0]
    assert 'rename "servers" to "mcpServers"' in problem.message


def test_digest_changes_with_the_definition_not_with_key_order() -> None:
    a = {"command": "x", "args": ["1"]}
    assert definition_digest(a) == definition_digest({"args": ["1"], "command": "x"})
    assert definition_digest(a) != definition_digest({"command": "x", "args": ["2"]})
