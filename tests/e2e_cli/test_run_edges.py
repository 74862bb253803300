"""``lsp-agent -p`` rough edges: bad ``--mcp-config``, unknown flags and bad choices (one line,
exit 2), ``--tools``, ``--max-budget-usd``, the system prompt file flags, ``--offline``, the
cost fields of the result, failed runs that leave no session behind, and ``--help``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.model.pricing import cost_usd
from lsp_agent.model.types import Usage
from lsp_agent.testing.scenario import ScriptedUsage, expecting, reply, scenario, tool_use
from tests.e2e_cli.conftest import RUN_TIMEOUT_S, cli_env, run_cli
from tests.e2e_cli.test_run_exit_codes import free_port

NONE = scenario(name="none")
UNKNOWN = "lsp-agent: error: unknown option --bogus"


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "data"
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(data))
    return data


def transcripts(data: Path) -> list[Path]:
    return sorted(data.rglob("*.jsonl"))


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('{"mcpServers": {', "invalid JSON"),
        ("missing.json", "no such file"),
        ("[1, 2]", "expected a JSON object"),
    ],
    ids=["invalid-json", "missing-file", "not-an-object"],
)
def test_a_bad_mcp_config_exits_2_without_running(project: Path, config: str, message: str) -> None:
    (project / "list.json").write_text("[1, 2]")
    value = "list.json" if config == "[1, 2]" else config
    result = run_cli(
        ["-p", "Say hi", "--output-format", "json", "--mcp-config", value],
        scenario=NONE,
        cwd=project,
    )
    assert result.code == 2, result.proc.stderr
    assert message in result.proc.stderr
    assert "--mcp-config" in result.proc.stderr
    assert result.proc.stdout == ""
    assert result.server.requests == []  # the prompt never ran


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-p", "--bogus", "Say hi"], f"{UNKNOWN} (see lsp-agent run --help)"),
        (["-p", "--bogus=3", "Say hi"], f"{UNKNOWN} (see lsp-agent run --help)"),
        (["-p", "--json-schema", "{}", "Say hi"], "--json-schema is a Claude Code flag"),
        (["-p", "--output-format", "xml", "Say hi"], "invalid choice: 'xml'"),
        (["-p", "Say", "hi"], "unexpected argument 'hi'"),
        (["--bogus"], f"{UNKNOWN} (see lsp-agent --help)"),
    ],
    ids=["unknown", "unknown-with-value", "unsupported", "choice", "two-words", "top-level"],
)
def test_a_bad_flag_is_one_line_and_exit_2(project: Path, args: list[str], expected: str) -> None:
    result = run_cli(args, scenario=NONE, cwd=project)
    assert result.code == 2, result.proc.stderr
    lines = result.proc.stderr.splitlines()
    assert len(lines) == 1, result.proc.stderr
    assert expected in lines[0]
    assert "usage:" not in result.proc.stderr
    assert "Say hi" not in result.proc.stderr  # the prompt is not mistaken for the culprit
    assert result.server.requests == []


@pytest.mark.parametrize(
    ("tools", "offered"),
    [("Read,Grep", ["Read", "Grep"]), ("", []), ("default", None)],
    ids=["two", "none", "default"],
)
def test_tools_restricts_the_built_in_tools(
    project: Path, tools: str, offered: list[str] | None
) -> None:
    result = run_cli(
        ["-p", "Say hi", "--output-format", "stream-json", "--tools", tools],
        scenario=scenario(reply("Hi!")),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    init = result.events()[0]
    sent = [t["name"] for t in result.server.requests[0].get("tools", [])]
    if offered is None:
        assert {"Read", "Edit", "Write", "Bash"} <= set(sent)
    else:
        assert sent == offered
        assert init["tools"] == offered


def test_tools_with_an_unknown_name_exits_2(project: Path) -> None:
    result = run_cli(["-p", "Say hi", "--tools", "Read,Teleport"], scenario=NONE, cwd=project)
    assert result.code == 2
    assert "unknown tool Teleport" in result.proc.stderr
    assert result.server.requests == []


def test_max_budget_usd_stops_the_run(project: Path) -> None:
    expensive = ScriptedUsage(input_tokens=100_000, output_tokens=1_000)
    two = scenario(
        reply(tool_use("Read", {"file_path": "{{cwd}}/calc.py"}), usage=expensive),
        reply("never reached"),
        name="over_budget",
    )
    result = run_cli(
        ["-p", "look", "--max-budget-usd", "0.01", "--output-format", "json"],
        scenario=two,
        cwd=project,
    )
    assert result.code == 1, result.proc.stderr
    obj = json.loads(result.proc.stdout)
    assert (obj["subtype"], obj["is_error"]) == ("error_max_budget_usd", True)
    assert "maximum budget" in obj["errors"][0]
    assert obj["total_cost_usd"] > 0.01
    assert result.server.unconsumed() == [1]  # no request after the budget was spent


def test_max_budget_usd_must_be_positive(project: Path) -> None:
    result = run_cli(["-p", "x", "--max-budget-usd", "-1"], scenario=NONE, cwd=project)
    assert result.code == 2
    assert "expected a positive number" in result.proc.stderr


def test_result_carries_cost_and_model_usage(project: Path) -> None:
    usage = ScriptedUsage(
        input_tokens=1_200,
        output_tokens=300,
        cache_creation_input_tokens=2_000,
        cache_read_input_tokens=5_000,
    )
    result = run_cli(
        ["-p", "Say hi", "--output-format", "json", "--model", "claude-sonnet-4-5"],
        scenario=scenario(reply("Hi!", usage=usage)),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    obj = json.loads(result.proc.stdout)
    expected = cost_usd("claude-sonnet-4-5", Usage(**usage.model_dump()))
    # Sonnet list prices: $3 / $15 per million, cache writes $3.75, cache reads $0.30.
    assert expected == pytest.approx((1_200 * 3 + 300 * 15 + 2_000 * 3.75 + 5_000 * 0.3) / 1e6)
    assert obj["total_cost_usd"] == pytest.approx(expected)
    (name,) = obj["modelUsage"]
    assert name.startswith("claude-sonnet-4-5")
    assert obj["modelUsage"][name] == {
        "inputTokens": 1_200,
        "outputTokens": 300,
        "cacheReadInputTokens": 5_000,
        "cacheCreationInputTokens": 2_000,
        "webSearchRequests": 0,
        "costUSD": pytest.approx(expected),
        "contextWindow": 200_000,
    }


def test_system_prompt_files(project: Path, tmp_path: Path) -> None:
    replace = tmp_path / "system.txt"
    replace.write_text("You are a terse reviewer.")
    append = tmp_path / "append.txt"
    append.write_text("Always answer in French.")
    result = run_cli(
        [
            "-p",
            "Say hi",
            "--system-prompt-file",
            str(replace),
            "--append-system-prompt-file",
            str(append),
        ],
        scenario=scenario(reply("Salut !")),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    system = json.dumps(result.server.requests[0]["system"])
    assert "You are a terse reviewer." in system
    assert "Always answer in French." in system


def test_system_prompt_and_its_file_together_is_a_usage_error(
    project: Path, tmp_path: Path
) -> None:
    file = tmp_path / "system.txt"
    file.write_text("x")
    both = run_cli(
        ["-p", "x", "--system-prompt", "y", "--system-prompt-file", str(file)],
        scenario=NONE,
        cwd=project,
    )
    assert both.code == 2
    assert "cannot be used together" in both.proc.stderr
    missing = run_cli(
        ["-p", "x", "--append-system-prompt-file", "nope.txt"], scenario=NONE, cwd=project
    )
    assert missing.code == 2
    assert "--append-system-prompt-file 'nope.txt': no such file" in missing.proc.stderr


def plain_env() -> dict[str, str]:
    """The environment of a user without any key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.pop("PYTEST_ADDOPTS", None)
    env["LSP_AGENT_NO_DAEMON"] = "1"
    return env


def run_plain(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        cwd=cwd,
        env=plain_env(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_offline_runs_without_a_key(project: Path) -> None:
    proc = run_plain(["-p", "--offline", "What is in calc.py?", "--output-format", "json"], project)
    assert proc.returncode == 0, proc.stderr
    obj = json.loads(proc.stdout)
    assert obj["subtype"] == "success"
    assert "calc.py" in obj["result"]
    assert "add" in obj["result"]  # it read the file and names what it defines
    assert "not Claude" in obj["result"]
    assert obj["total_cost_usd"] == 0
    streamed = run_plain(["-p", "--offline", "hi", "--output-format", "stream-json"], project)
    init = json.loads(streamed.stdout.splitlines()[0])
    assert init["subtype"] == "init"
    assert init["apiKeySource"] == "none"  # the trial endpoint's stand-in key is no credential


def test_no_key_names_offline_and_the_demo_and_saves_no_session(
    project: Path, data_dir: Path
) -> None:
    proc = run_plain(["-p", "hello"], project)
    assert proc.returncode == 1
    assert "No credentials" in proc.stderr
    assert "--offline" in proc.stderr
    assert "lsp-agent demo" in proc.stderr
    assert transcripts(data_dir) == []
    again = run_plain(["-p", "hello again", "--continue"], project)
    assert again.returncode == 1
    assert "no saved session" in again.stderr


def test_no_key_with_the_users_defaults_prints_the_error_alone(project: Path) -> None:
    # Background requests on (the user's default): the session title request that the turn
    # starts fails the same way, and must not add a log line of its own.
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "-p", "hello"],
        cwd=project,
        env={**plain_env(), "LSP_AGENT_BACKGROUND_REQUESTS": "1", "HOME": str(project)},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("lsp-agent: error: No credentials for the model endpoint")


def test_compact_without_a_key_names_offline(project: Path, data_dir: Path) -> None:
    first = run_plain(["-p", "--offline", "What is in calc.py?"], project)
    assert first.returncode == 0, first.stderr
    proc = run_plain(["-p", "/compact", "-c"], project)  # --offline not repeated
    assert proc.returncode == 1
    assert "lsp-agent: error: Compaction failed" in proc.stderr
    assert "No credentials" in proc.stderr and "`lsp-agent -p --offline PROMPT`" in proc.stderr


def test_endpoint_down_saves_no_session(project: Path, data_dir: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "-p", "hello"],
        cwd=project,
        env=cli_env(f"http://127.0.0.1:{free_port()}"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert transcripts(data_dir) == []
    # A run that got an answer is saved, and -c continues it.
    ok = run_cli(["-p", "remember 7"], scenario=scenario(reply("Remembered.")), cwd=project)
    assert ok.code == 0, ok.proc.stderr
    assert len(transcripts(data_dir)) == 1
    again = run_cli(
        ["-p", "which number?", "-c"],
        scenario=scenario(reply("7", expect=expecting(last_user_contains="which number"))),
        cwd=project,
    )
    assert again.code == 0, again.proc.stderr
    assert len(again.server.requests[0]["messages"]) == 3


def test_help_lists_the_environment_and_the_new_flags(project: Path) -> None:
    proc = run_plain(["run", "--help"], project)
    assert proc.returncode == 0
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "API_TIMEOUT_MS",
        "LSP_AGENT_CONNECT_TIMEOUT_MS",
        "LSP_AGENT_MAX_RETRIES",
        "LSP_AGENT_NO_DAEMON",
        "LSP_AGENT_DATA_DIR",
        "LSP_AGENT_BACKGROUND_REQUESTS",
        "MCP_TIMEOUT",
        "BASH_MAX_OUTPUT_LENGTH",
        "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
        "CLAUDE_CODE_SKIP_VERTEX_AUTH",
        "VERTEX_REGION_CLAUDE_",
        "--tools",
        "--max-budget-usd",
        "--system-prompt-file",
        "--append-system-prompt-file",
        "--offline",
        "lsp-agent demo",
    ):
        assert name in proc.stdout, name


def test_a_call_when_no_tool_is_on_says_none_are(project: Path) -> None:
    run = run_cli(
        ["-p", "read it", "--tools", ""],
        scenario=scenario(reply(tool_use("Read", {"file_path": "{{cwd}}/calc.py"})), reply("Ok.")),
        cwd=project,
    )
    assert run.code == 0, run.proc.stderr
    sent = json.dumps(run.server.requests[1]["messages"][-1])
    assert "No such tool: 'Read'. Available tools: none (every tool is off" in sent
