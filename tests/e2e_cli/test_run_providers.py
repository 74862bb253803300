"""`run -p` with Claude Code's model flags: an alias, and `--fallback-model` when the model is
overloaded (the scripted server answers 529 first)."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_agent.testing.scenario import error, reply, scenario

from .conftest import run_cli


def test_fallback_model_after_overload(project: Path) -> None:
    overloaded = scenario(
        error(529, "Overloaded", type="overloaded_error"),
        reply("Answered by the fallback model."),
        name="overloaded",
    )
    result = run_cli(
        ["run", "-p", "hello", "--model", "opus", "--fallback-model", "sonnet",
         "--output-format", "json"],
        scenario=overloaded,
        cwd=project,
    )  # fmt: skip
    assert result.code == 0, result.proc.stderr
    assert json.loads(result.proc.stdout)["result"] == "Answered by the fallback model."
    assert [body["model"] for body in result.server.requests] == [
        "claude-opus-4-8",
        "claude-sonnet-4-6",
    ]
    assert "opus is overloaded" in result.proc.stderr
    assert "using sonnet instead" in result.proc.stderr


def test_without_fallback_an_overload_fails(project: Path) -> None:
    overloaded = scenario(error(529, "Overloaded", type="overloaded_error"), name="overloaded")
    result = run_cli(["run", "-p", "hello", "--model", "haiku"], scenario=overloaded, cwd=project)
    assert result.code == 1
    assert result.server.requests[0]["model"] == "claude-haiku-4-5"
