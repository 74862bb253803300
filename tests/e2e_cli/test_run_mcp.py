"""``lsp-agent run -p`` with MCP servers: --mcp-config, --strict-mcp-config, approval of
project servers, permissions on mcp__ tools, the init event."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from tests.e2e_cli.conftest import run_cli
from tests.e2e_mcp.conftest import stdio_entry
from tests.mcp_servers.fixture_server import chart_png


def echo_scenario(result: ToolResultExpect) -> object:
    return scenario(
        reply(
            tool_use("mcp__fx__echo", {"text": "hello"}, id="toolu_mcp"),
            expect=expecting(
                tools_include=["Read", "mcp__fx__echo", "mcp__fx__add"],
                system_contains="The fx server echoes and adds.",
            ),
        ),
        reply("Done.", expect=expecting(tool_results=[result])),
        name="mcp-echo",
    )


def config(tmp: Path, **servers: object) -> Path:
    path = tmp / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_mcp_config_tools_run_when_allowed(project: Path, tmp_path: Path) -> None:
    cfg = config(tmp_path, fx=stdio_entry("--name", "fx"))
    result = run_cli(
        [
            "run",
            "-p",
            "echo hello",
            "--output-format",
            "stream-json",
            "--mcp-config",
            str(cfg),
            "--allowedTools",
            "mcp__fx",
        ],
        scenario=echo_scenario(ToolResultExpect(is_error=False, contains="echo: hello")),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    init = result.events()[0]
    assert init["mcp_servers"] == [{"name": "fx", "status": "connected"}]
    assert "mcp__fx__echo" in init["tools"] and "Bash" in init["tools"]
    result.server.assert_done()


def test_mcp_tools_are_denied_without_an_allow_rule(project: Path, tmp_path: Path) -> None:
    cfg = config(tmp_path, fx=stdio_entry("--name", "fx"))
    result = run_cli(
        ["run", "-p", "echo hello", "--output-format", "stream-json", "--mcp-config", str(cfg)],
        scenario=echo_scenario(ToolResultExpect(is_error=True, contains="Permission denied")),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    assert result.events()[-1]["permission_denials"][0]["tool_name"] == "mcp__fx__echo"
    result.server.assert_done()


def test_a_deny_rule_beats_bypass_permissions(project: Path, tmp_path: Path) -> None:
    cfg = config(tmp_path, fx=stdio_entry("--name", "fx"))
    result = run_cli(
        [
            "run",
            "-p",
            "echo hello",
            "--mcp-config",
            str(cfg),
            "--permission-mode",
            "bypassPermissions",
            "--disallowedTools",
            "mcp__fx__echo",
        ],
        scenario=echo_scenario(ToolResultExpect(is_error=True, contains="denied")),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    result.server.assert_done()


def test_a_ctx_elicit_question_is_declined_in_run_p(project: Path, tmp_path: Path) -> None:
    """Nobody can answer a form in run -p: a tool doing ``await ctx.elicit(...)`` gets
    ``decline`` (as documented), not a transport error."""
    cfg = config(tmp_path, fx=stdio_entry("--name", "fx"))
    result = run_cli(
        ["run", "-p", "pick", "--mcp-config", str(cfg), "--allowedTools", "mcp__fx"],
        scenario=scenario(
            reply(tool_use("mcp__fx__pick", {}, id="toolu_pick")),
            reply(
                "Declined.",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="answer: decline")]
                ),
            ),
            name="mcp-pick",
        ),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    result.server.assert_done()


def test_project_servers_wait_for_approval_and_strict_ignores_them(
    project: Path, tmp_path: Path
) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": stdio_entry()}}))
    plain = scenario(reply("Nothing to do.", expect=expecting()), name="plain")
    result = run_cli(
        ["run", "-p", "hi", "--output-format", "stream-json"], scenario=plain, cwd=project
    )
    assert result.code == 0, result.proc.stderr
    assert result.events()[0]["mcp_servers"] == [{"name": "proj", "status": "needs-approval"}]
    lines = [line for line in result.proc.stderr.splitlines() if "MCP server proj" in line]
    assert len(lines) == 1, result.proc.stderr  # one line, saying what to do
    assert "MCP server proj: needs-approval" in lines[0]  # the init event's spelling
    assert "`lsp-agent mcp approve proj`" in lines[0] and "--mcp-config .mcp.json" in lines[0]
    cfg = config(tmp_path, fx=stdio_entry("--name", "fx"))
    strict = run_cli(
        [
            "run",
            "-p",
            "echo hello",
            "--output-format",
            "stream-json",
            "--mcp-config",
            str(cfg),
            "--strict-mcp-config",
            "--allowedTools",
            "mcp__fx__echo",
        ],
        scenario=echo_scenario(ToolResultExpect(is_error=False, contains="echo: hello")),
        cwd=project,
    )
    assert strict.code == 0, strict.proc.stderr
    assert strict.events()[0]["mcp_servers"] == [{"name": "fx", "status": "connected"}]


def test_the_approval_line_waits_for_a_model_turn(project: Path) -> None:
    """A `/cost` or `#` note run never uses MCP: no line about an unapproved project server."""
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": stdio_entry()}}))
    for prompt in ("/cost", "# remember to run the tests"):
        result = run_cli(
            ["run", "-p", prompt, "--permission-mode", "acceptEdits"],
            scenario=scenario(name="none"),
            cwd=project,
        )
        assert result.code == 0, result.proc.stderr
        assert "MCP server proj" not in result.proc.stderr
        result.server.assert_done()


def test_config_errors_are_reported_with_their_position(project: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {\n  "x": {"command": 3}\n}}')
    plain = scenario(reply("ok", expect=expecting()), name="plain")
    result = run_cli(["run", "-p", "hi", "--mcp-config", str(bad)], scenario=plain, cwd=project)
    assert result.code == 0, result.proc.stderr
    assert f"{bad}:2:" in result.proc.stderr and '"command" must be' in result.proc.stderr


def test_an_image_result_reaches_the_model_as_an_image_block(project: Path, tmp_path: Path) -> None:
    cfg = config(tmp_path, fx=stdio_entry("--name", "fx"))
    image_block = json.dumps(
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "D"}}
    ).replace('"D"', json.dumps(chart_png()))
    run = scenario(
        reply(tool_use("mcp__fx__media", {}, id="toolu_media")),
        reply(
            tool_use("mcp__fx__stats", {}, id="toolu_stats"),
            expect=expecting(
                request_contains=image_block,
                tool_results=[
                    ToolResultExpect(
                        is_error=False,
                        contains="the chart:\n[image (png, 34 KB)]\n[audio (wav, 6 KB): the "
                        "model cannot hear audio, not shown]\n[resource link readme: "
                        "test://notes/readme]",
                    )
                ],
            ),
        ),
        reply(
            "Done.",
            expect=expecting(
                tool_results=[ToolResultExpect(is_error=False, contains='"rows": 2')],
                request_lacks="UklGRg==",
            ),
        ),
        name="mcp-media",
    )
    result = run_cli(
        [
            "run",
            "-p",
            "show the chart",
            "--mcp-config",
            str(cfg),
            "--allowedTools",
            "mcp__fx",
            "--output-format",
            "stream-json",
        ],
        scenario=run,
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    result.server.assert_done()
    # stream-json prints the tool result as the API got it: text, then the image block.
    results = [
        block
        for event in result.events()
        if event["type"] == "user"
        for block in event["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    media, stats = results
    assert media["content"][0]["text"].startswith("the chart:\n[image (png, 34 KB)]")
    assert media["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": chart_png()},
    }
    assert "images" not in media and "images" not in stats


def test_run_p_reports_a_server_needing_login_and_uses_a_stored_token(
    project: Path, tmp_path: Path
) -> None:
    """run -p never waits for a browser: a server that wants OAuth is reported (stderr line,
    ``needs-auth`` in the init event) and the run goes on without it; once logged in (as an
    editor does, into the same credentials file), run -p uses the token."""
    import asyncio
    import os

    from lsp_agent.mcp.pool import McpPool
    from tests.e2e_mcp.conftest import free_port, plan_of, stop, test_limits
    from tests.e2e_mcp.test_oauth import Browser, logged_in, start_oauth

    port = free_port()
    proc = start_oauth(port)
    url = f"http://127.0.0.1:{port}/mcp"
    cfg = config(tmp_path, secure={"type": "http", "url": url})
    args = ["run", "-p", "who am I?", "--output-format", "stream-json", "--mcp-config", str(cfg)]
    try:
        first = run_cli(args, scenario=scenario(reply("No tools for that.")), cwd=project)
        assert first.code == 0, first.proc.stderr
        assert first.events()[0]["mcp_servers"] == [{"name": "secure", "status": "needs-auth"}]
        assert "MCP server secure: needs-login" in first.proc.stderr
        assert ":AgentMcp login secure" in first.proc.stderr

        async def log_in() -> None:
            pool = McpPool(
                plan=plan_of({"secure": {"type": "http", "url": url}}),
                limits=test_limits(),
                project=project,
                environ=os.environ,
                home=Path.home(),
            )
            pool.start()
            try:
                await logged_in(pool, Browser())
            finally:
                await pool.aclose()

        asyncio.run(log_in())
        second = run_cli(
            [*args, "--allowedTools", "mcp__secure"],
            scenario=scenario(
                reply(
                    tool_use("mcp__secure__whoami", {}, id="toolu_who"),
                    expect=expecting(tools_include=["mcp__secure__whoami"]),
                ),
                reply(
                    "You are authorised.",
                    expect=expecting(
                        tool_results=[ToolResultExpect(is_error=False, contains="authorised")]
                    ),
                ),
            ),
            cwd=project,
        )
        assert second.code == 0, second.proc.stderr
        assert second.events()[0]["mcp_servers"] == [{"name": "secure", "status": "connected"}]
        second.server.assert_done()
    finally:
        stop(proc)


def test_a_schema_the_api_would_reject_reaches_the_model_normalised(
    project: Path, tmp_path: Path
) -> None:
    cfg = config(tmp_path, fx=stdio_entry("--name", "fx"))
    # The server's top-level anyOf is folded into one object schema.
    normalised = {
        "name": "mcp__fx__source",
        "description": "Fetch from a path or a URL (its schema is a top-level anyOf, as some "
        "servers send).",
        "input_schema": {
            "properties": {"path": {"type": "string"}, "url": {"type": "string"}},
            "type": "object",
        },
    }
    run = scenario(
        reply(
            tool_use("mcp__fx__source", {"url": "https://example.org"}, id="toolu_src"),
            expect=expecting(tools_include=["mcp__fx__source"]),
        ),
        reply(
            "Done.",
            expect=expecting(
                tool_results=[ToolResultExpect(is_error=False, contains="fetched https://")]
            ),
        ),
        name="mcp-schema",
    )
    result = run_cli(
        ["run", "-p", "fetch it", "--mcp-config", str(cfg), "--allowedTools", "mcp__fx"],
        scenario=run,
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    result.server.assert_done()
    tools = result.server.requests[0]["tools"]
    (source,) = [t for t in tools if t["name"] == "mcp__fx__source"]
    assert source == normalised


def test_a_broken_mcp_config_server_is_reported_once(project: Path) -> None:
    plain = scenario(reply("Nothing to do.", expect=expecting()), name="plain")
    inline = json.dumps({"mcpServers": {"x": {"command": "${NOPE_VAR}"}}})
    result = run_cli(["run", "-p", "hi", "--mcp-config", inline], scenario=plain, cwd=project)
    assert result.code == 0, result.proc.stderr
    lines = [line for line in result.proc.stderr.splitlines() if "NOPE_VAR" in line]
    assert lines == [
        "lsp-agent: error: --mcp-config: MCP server 'x': environment variable not set: NOPE_VAR"
    ]
    vscode_shape = json.dumps({"servers": {}})
    renamed = run_cli(
        ["run", "-p", "hi", "--mcp-config", vscode_shape], scenario=plain, cwd=project
    )
    assert 'rename "servers" to "mcpServers"' in renamed.proc.stderr
