"""`run -p` shows the model client's retries: Claude Code's `system`/`api_retry` message in
stream-json, a line on stderr in text mode (the scripted server answers 529 and 429 first)."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_agent.testing.scenario import Scenario, error, reply, scenario

from .conftest import run_cli


def _flaky() -> Scenario:
    return scenario(
        error(529, "Overloaded", type="overloaded_error", retry_after_s=0.02),
        error(429, "Slow down", type="rate_limit_error", retry_after_s=0.01),
        reply("Answered at last."),
        name="flaky",
    )


def test_stream_json_has_an_api_retry_message_per_retry(project: Path) -> None:
    result = run_cli(
        ["-p", "--output-format", "stream-json", "--verbose", "hello"],
        scenario=_flaky(),
        cwd=project,
        extra_env={"LSP_AGENT_MAX_RETRIES": "3"},
    )
    assert result.code == 0, result.proc.stderr
    events = [json.loads(line) for line in result.proc.stdout.splitlines()]
    retries = [e for e in events if e.get("subtype") == "api_retry"]
    assert [
        (e["type"], e["attempt"], e["max_retries"], e["retry_delay_ms"], e["error_status"],
         e["error"], e["error_type"])
        for e in retries
    ] == [
        ("system", 1, 3, 20, 529, "server_error", "overloaded_error"),
        ("system", 2, 3, 10, 429, "rate_limit", "rate_limit_error"),
    ]  # fmt: skip
    session = events[0]["session_id"]
    assert all(e["session_id"] == session and e["uuid"] for e in retries)
    kinds = [(e["type"], e.get("subtype")) for e in events]
    # The retries come before the answer, after the init line.
    assert kinds.index(("system", "api_retry")) > kinds.index(("system", "init"))
    assert kinds.index(("assistant", None)) > kinds.index(("system", "api_retry"))
    assert events[-1]["result"] == "Answered at last."
    assert len(result.server.requests) == 3


def test_text_mode_says_each_retry_on_stderr(project: Path) -> None:
    result = run_cli(
        ["-p", "hello"],
        scenario=_flaky(),
        cwd=project,
        extra_env={"LSP_AGENT_MAX_RETRIES": "3"},
    )
    assert result.code == 0, result.proc.stderr
    assert result.proc.stdout == "Answered at last.\n"
    lines = [line for line in result.proc.stderr.splitlines() if "retrying" in line]
    assert lines == [
        "lsp-agent: retrying (1/3) in 20 ms — overloaded_error (HTTP 529)",
        "lsp-agent: retrying (2/3) in 10 ms — rate_limit_error (HTTP 429)",
    ]
