"""Permission prompts in plain words: rules shown as the path or command the user knows, the
Bash reason without analyser repetition."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.permissions.bash_decisions import plain_reason
from lsp_agent.permissions.suggestions import rule_label


def test_path_rules_are_shown_relative_to_the_project() -> None:
    cwd = Path("/work/proj")
    assert rule_label("Edit(//work/proj/src/calc.py)", cwd) == "Edit src/calc.py"
    assert rule_label("Read(//work/proj/docs/**)", cwd) == "Read files under docs/"
    assert rule_label("Edit(//work/proj/**)", cwd) == "Edit files in the project"
    assert rule_label("Edit(//etc/hosts)", cwd) == "Edit /etc/hosts"
    home = Path.home()
    assert rule_label(f"Read(/{home}/notes.md)", cwd) == "Read ~/notes.md"


def test_other_rules_are_shown_as_they_are() -> None:
    for rule in ("Bash(python -m pytest:*)", "WebFetch(domain:docs.python.org)", "Glob",
                 "mcp__db__query", "Edit(src/*.py)", "Bash(oops"):  # fmt: skip
        assert rule_label(rule, Path("/work/proj")) == rule


def test_bash_reason_does_not_repeat_the_command() -> None:
    detail = "it can run code or change files (only its version query is known to be safe)"
    command = "python -m pytest -q"
    assert plain_reason(command, f"{detail} (`{command}`)") == (
        "It can run code or change files (only its version query is known to be safe)"
    )
    # A part of a longer command stays named.
    assert plain_reason("ls | xargs rm", "rm is not a known read-only command (`xargs rm`)") == (
        "rm is not a known read-only command (`xargs rm`)"
    )
    assert plain_reason("x", "it writes to out.txt") == "It writes to out.txt."
