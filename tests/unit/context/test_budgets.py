"""Tool-result budgets: spill oversized output to a file, keep a head-and-tail preview."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.context.budgets import (
    BASH_BUDGET_CHARS,
    BASH_BUDGET_MAX_CHARS,
    ERROR_EXCERPT_CHARS,
    budget_for,
    fit,
    head_tail,
    result_path,
    spill,
)


def test_budgets_per_tool_and_env_override() -> None:
    assert budget_for("Bash") == BASH_BUDGET_CHARS
    assert budget_for("Bash", {"BASH_MAX_OUTPUT_LENGTH": "50000"}) == 50_000
    assert budget_for("Bash", {"BASH_MAX_OUTPUT_LENGTH": "9999999"}) == BASH_BUDGET_MAX_CHARS
    assert budget_for("Bash", {"BASH_MAX_OUTPUT_LENGTH": "lots"}) == BASH_BUDGET_CHARS
    assert budget_for("Read") is None
    assert budget_for("Grep") is not None


def test_within_budget_is_unchanged(tmp_path: Path) -> None:
    got = fit("short", budget=100, is_error=False, path=tmp_path / "x.txt")
    assert got.text == "short"
    assert not got.spilled


def test_over_budget_keeps_head_tail_and_names_the_file(tmp_path: Path) -> None:
    text = "HEAD-START\n" + "m" * 100_000 + "\nTAIL-END"
    path = tmp_path / "r.txt"
    got = fit(text, budget=1000, is_error=False, path=path)
    assert got.spilled
    assert "HEAD-START" in got.text and "TAIL-END" in got.text
    assert str(path) in got.text
    assert len(got.text) < 2000
    assert f"{len(text)} characters" in got.text


def test_failing_command_keeps_a_smaller_head_and_tail(tmp_path: Path) -> None:
    text = "cmd\n" + "x" * 200_000 + "\nError: boom"
    got = fit(text, budget=100_000, is_error=True, path=tmp_path / "r.txt")
    assert got.spilled
    assert "Error: boom" in got.text and got.text.count("x") <= ERROR_EXCERPT_CHARS


def test_head_tail_counts_what_it_drops() -> None:
    assert head_tail("abc", 10) == "abc"
    cut = head_tail("a" * 50 + "b" * 50, 20)
    assert cut.startswith("a" * 10) and cut.endswith("b" * 10) and "80 characters omitted" in cut


def test_spill_writes_privately_under_tool_results(tmp_path: Path) -> None:
    path = result_path(tmp_path, "toolu_01/../../evil")
    assert path.parent == tmp_path / "tool-results"
    spill(path, "full text \u00e9")
    assert path.read_text(encoding="utf-8") == "full text \u00e9"
    assert path.stat().st_mode & 0o077 == 0
