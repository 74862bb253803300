"""``lsp-agent -p`` rough edges a fresh user met: a piped prompt too long for the model's
window is refused before anything is sent, naming the sizes, while a large one that fits is
sent whole; the offline trial model's answers have distinct message ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_agent.model.background import BACKGROUND_ENV
from lsp_agent.testing.scenario import expecting, reply, scenario
from tests.e2e_cli.conftest import run_cli
from tests.e2e_cli.test_run_edges import run_plain

NONE = scenario(name="none")


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "data"
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(data))
    return data


def test_a_piped_prompt_beyond_the_window_is_refused_before_sending(
    project: Path, data_dir: Path
) -> None:
    log = "INFO request served in 12 ms\n" * 110_000  # 3.2 million characters
    run = run_cli(
        ["-p", "explain these logs", "--model", "claude-sonnet-4-5", "--output-format", "json"],
        scenario=NONE,
        cwd=project,
        stdin_text=log,
    )
    assert run.code == 1, run.proc.stderr
    assert run.server.requests == []  # nothing was sent
    assert run.proc.stdout == ""
    [line] = run.proc.stderr.splitlines()
    assert line.startswith("lsp-agent: error: Prompt is too long: about 797,505 tokens (3.0 MB)")
    assert "200,000-token context window of claude-sonnet-4-5" in line
    assert not list(data_dir.rglob("*.jsonl"))  # no session saved


def test_a_large_piped_prompt_that_fits_is_sent(project: Path) -> None:
    log = "x" * 400_000 + "\nTHE END"  # 100k tokens: fits a 200k window
    run = run_cli(
        ["-p", "explain", "--model", "claude-sonnet-4-5", "--output-format", "json"],
        scenario=scenario(reply("Fine.", expect=expecting(last_user_contains="THE END"))),
        cwd=project,
        stdin_text=log,
    )
    assert run.code == 0, run.proc.stderr
    assert json.loads(run.proc.stdout)["result"] == "Fine."
    assert "too long" not in run.proc.stderr


def test_api_time_counts_concurrent_requests_once(project: Path) -> None:
    """With the user's default (background requests on), the session title is asked for while
    the turn's own request runs: both wait on the API at once, and ``duration_api_ms`` counts
    that time once, never more than the turn's wall time."""
    run = run_cli(
        ["-p", "explain calc.py", "--output-format", "json"],
        scenario=scenario(
            reply("It adds.", delay_ms=4000),
            background={"title": [reply("Explain calc", delay_ms=3000)]},
        ),
        cwd=project,
        extra_env={BACKGROUND_ENV: "1"},
    )
    assert run.code == 0, run.proc.stderr
    assert run.server.server.background_unconsumed("title") == 0  # the title was asked for
    obj = json.loads(run.proc.stdout)
    assert obj["duration_api_ms"] >= 4000  # the turn's own request, answered after its delay
    assert obj["duration_ms"] >= obj["duration_api_ms"]


def test_a_failed_mcp_server_is_reported_once(project: Path) -> None:
    """The supervisor retries a server that fails to start and logs each attempt; the run
    says it once, on stderr, and goes on without the server."""
    config = json.dumps({"mcpServers": {"broken": {"command": "no-such-command-for-lsp-agent"}}})
    run = run_cli(
        ["-p", "hi", "--output-format", "json", "--mcp-config", config],
        scenario=scenario(reply("Hello.")),
        cwd=project,
        extra_env={"MCP_TIMEOUT": "3000"},
    )
    assert run.code == 0, run.proc.stderr
    assert json.loads(run.proc.stdout)["result"] == "Hello."
    lines = [line for line in run.proc.stderr.splitlines() if "no-such-command" in line]
    assert len(lines) == 1, run.proc.stderr
    assert lines[0].startswith("lsp-agent: MCP server broken: failed: command not found")


def test_a_refused_memory_note_is_reported_on_stderr_only(project: Path) -> None:
    """stdout carries answers: a ``#`` note the run may not write (default mode, nobody to
    ask) leaves it empty and says why once, on stderr, in the one error form."""
    run = run_cli(["-p", "# always run the tests first"], scenario=NONE, cwd=project)
    assert run.code == 1
    assert run.proc.stdout == ""
    [line] = run.proc.stderr.splitlines()
    assert line.startswith(f"lsp-agent: error: The note was not added to {project / 'CLAUDE.md'}")
    # The advice names the exact rule that lets notes in (the test below uses it).
    assert line.endswith(
        "Allow it with --allowedTools 'Edit(CLAUDE.md)' or --permission-mode acceptEdits."
    ), line
    assert not (project / "CLAUDE.md").exists()
    assert run.server.requests == []


def test_a_memory_note_is_written_when_an_allow_rule_covers_claude_md(project: Path) -> None:
    """The way out the README names for a ``#`` note in ``run -p``: an Edit rule on the file."""
    run = run_cli(
        ["-p", "# always run the tests first", "--allowedTools", "Edit(CLAUDE.md)"],
        scenario=NONE,
        cwd=project,
    )
    assert run.code == 0, run.proc.stderr
    assert (project / "CLAUDE.md").read_text() == "- always run the tests first\n"
    assert run.server.requests == []


def test_offline_reads_a_mention_followed_by_a_question_mark(project: Path) -> None:
    """``@calc.py?`` names calc.py, and the trial model's answer fits the command line."""
    proc = run_plain(
        ["-p", "--offline", "What is in @calc.py?", "--output-format", "json"], project
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)["result"]
    assert "`calc.py` has 2 lines" in result and "`add`" in result
    assert "leave out --offline" in result
    assert "restart the server" not in result and "buffer" not in result


def test_offline_answers_carry_distinct_message_ids(project: Path) -> None:
    """stream-json readers group assistant lines by message id: the trial model's two answers
    (the Read, then the reply) must not share one."""
    proc = run_plain(
        ["-p", "--offline", "What is in calc.py?", "--output-format", "stream-json"], project
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    ids = [obj["message"]["id"] for obj in lines if obj["type"] == "assistant"]
    assert len(ids) == 2, ids
    assert len(set(ids)) == 2, ids
    tool_ids = [
        block["id"]
        for obj in lines
        if obj["type"] == "assistant"
        for block in obj["message"]["content"]
        if block["type"] == "tool_use"
    ]
    assert tool_ids, lines
