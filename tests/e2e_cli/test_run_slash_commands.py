"""Slash commands in ``run -p``: ``/compact``, ``/context``, ``/cost`` and ``/clear`` on a saved
session (``--continue``/``--resume``), in every output format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import ScriptedUsage, expecting, reply, scenario
from tests.e2e_cli.conftest import run_cli


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "data"
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(data))
    return data


def saved_session(project: Path) -> str:
    first = run_cli(
        ["-p", "Say hello. Always answer in English.", "--output-format", "json"],
        scenario=scenario(reply("Hello.", usage=ScriptedUsage(input_tokens=1_234))),
        cwd=project,
    )
    assert first.code == 0, first.proc.stderr
    return str(json.loads(first.proc.stdout)["session_id"])


def answer(stdout: str, output_format: str) -> dict[str, object]:
    """The result of a run: the text on stdout, or the result object."""
    if output_format == "text":
        return {"result": stdout.strip(), "is_error": False}
    if output_format == "json":
        return dict(json.loads(stdout))
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    assert lines[0]["subtype"] == "init"
    assert lines[-1]["type"] == "result"
    return dict(lines[-1])


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_context_and_cost_on_a_continued_session(project: Path, output_format: str) -> None:
    session = saved_session(project)
    context = run_cli(
        ["-p", "/context", "-c", "--output-format", output_format],
        scenario=scenario(),
        cwd=project,
    )
    assert context.code == 0, context.proc.stderr
    out = answer(context.proc.stdout, output_format)
    assert "**Context:**" in str(out["result"]) and out["is_error"] is False
    cost = run_cli(
        ["-p", "/cost", "--resume", session, "--output-format", output_format],
        scenario=scenario(),
        cwd=project,
    )
    assert cost.code == 0, cost.proc.stderr
    shown = str(answer(cost.proc.stdout, output_format)["result"])
    assert "Tokens used in this session" in shown
    assert "| Input | 1,234 |" in shown  # the saved run's tokens count after a resume
    assert cost.server.requests == []


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_compact_on_a_continued_session(project: Path, output_format: str) -> None:
    saved_session(project)
    compact = run_cli(
        ["-p", "/compact greetings", "-c", "--output-format", output_format],
        scenario=scenario(
            reply("Goal: greet.", expect=expecting(last_user_contains="CONTEXT CHECKPOINT"))
        ),
        cwd=project,
    )
    assert compact.code == 0, compact.proc.stderr
    out = answer(compact.proc.stdout, output_format)
    assert str(out["result"]).startswith("Compacted:")
    if output_format != "text":
        assert out["total_cost_usd"] > 0  # the summary request is priced
    later = run_cli(
        ["-p", "and now", "-c", "--output-format", output_format],
        scenario=scenario(reply("Still here.", expect=expecting(last_user_contains="and now"))),
        cwd=project,
    )
    assert later.code == 0, later.proc.stderr
    first = json.dumps(later.server.requests[0]["messages"][0]["content"])
    assert "<compact-summary>" in first and "Always answer in English." in first


def test_clear_on_a_continued_session_starts_afresh(project: Path) -> None:
    saved_session(project)
    cleared = run_cli(
        ["-p", "/clear", "-c", "--output-format", "json"], scenario=scenario(), cwd=project
    )
    assert cleared.code == 0, cleared.proc.stderr
    assert "Conversation cleared" in str(json.loads(cleared.proc.stdout)["result"])
    later = run_cli(
        ["-p", "who are you", "-c"],
        scenario=scenario(reply("An agent.", expect=expecting(last_user_contains="who are you"))),
        cwd=project,
    )
    assert later.code == 0, later.proc.stderr
    assert len(later.server.requests[0]["messages"]) == 1  # nothing from before the clear


def test_unknown_command_is_an_error_result(project: Path) -> None:
    saved_session(project)
    run = run_cli(
        ["-p", "/frobnicate", "-c", "--output-format", "json"], scenario=scenario(), cwd=project
    )
    assert run.code == 1
    obj = json.loads(run.proc.stdout)
    assert obj["is_error"] is True and "/compact" in obj["errors"][0]
