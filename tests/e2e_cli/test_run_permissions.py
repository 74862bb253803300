"""``lsp-agent run -p`` permission modes and tool rules: with nobody to ask, an "ask" becomes a
denial the model sees; allowed calls really change the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from tests.e2e_cli.conftest import CALC, run_cli

FIXED = "def add(a, b):\n    return a + b\n"


def edit_scenario(*, denied: bool) -> object:
    """Read, Edit; the Edit's result must be a denial (``denied``) or a success."""
    result = (
        ToolResultExpect(is_error=True, contains="Permission denied")
        if denied
        else ToolResultExpect(is_error=False)
    )
    return scenario(
        reply(tool_use("Read", {"file_path": "{{cwd}}/calc.py"})),
        reply(
            tool_use(
                "Edit",
                {"file_path": "{{cwd}}/calc.py", "old_string": "a - b", "new_string": "a + b"},
                id="toolu_edit",
            ),
            expect=expecting(tool_results=[ToolResultExpect(is_error=False)]),
        ),
        reply("Done.", expect=expecting(tool_results=[result])),
        name="edit",
    )


def test_default_mode_turns_the_edit_into_a_denial(project: Path) -> None:
    result = run_cli(
        ["run", "-p", "fix add", "--permission-mode", "default", "--output-format", "stream-json"],
        scenario=edit_scenario(denied=True),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    assert (project / "calc.py").read_text() == CALC  # unchanged
    events = result.events()
    denial = next(
        block
        for e in events
        if e["type"] == "user"
        for block in e["message"]["content"]
        if block.get("tool_use_id") == "toolu_edit"
    )
    assert denial["is_error"] is True
    assert "non-interactive" in denial["content"] and "--allowedTools" in denial["content"]
    final = events[-1]
    assert final["permission_denials"] == [
        {
            "tool_name": "Edit",
            "tool_use_id": "toolu_edit",
            "tool_input": {
                "file_path": str(project / "calc.py"),
                "old_string": "a - b",
                "new_string": "a + b",
            },
        }
    ]
    result.server.assert_done()


@pytest.mark.parametrize(
    "flags",
    [
        ["--permission-mode", "bypassPermissions"],
        ["--permission-mode", "acceptEdits"],
        ["--allowedTools", "Edit"],
        ["--allowedTools", "Read,Edit(*.py)"],
    ],
    ids=["bypassPermissions", "acceptEdits", "allowedTools", "allowedTools-path-rule"],
)
def test_allowed_edits_change_the_file(project: Path, flags: list[str]) -> None:
    result = run_cli(
        ["run", "-p", "fix add", *flags], scenario=edit_scenario(denied=False), cwd=project
    )
    assert result.code == 0, result.proc.stderr
    assert (project / "calc.py").read_text() == FIXED
    result.server.assert_done()


def test_disallowed_tools_beat_bypass(project: Path) -> None:
    result = run_cli(
        [
            "run",
            "-p",
            "fix add",
            "--permission-mode",
            "bypassPermissions",
            "--disallowedTools",
            "Edit",
        ],
        scenario=edit_scenario(denied=True),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    assert (project / "calc.py").read_text() == CALC
    result.server.assert_done()


def test_plan_mode_denies_bash(project: Path) -> None:
    plan = scenario(
        reply(tool_use("Bash", {"command": "touch made-by-bash"})),
        reply(
            "Planned.",
            expect=expecting(
                tool_results=[ToolResultExpect(is_error=True, contains="Permission denied")]
            ),
        ),
        name="plan",
    )
    result = run_cli(["run", "-p", "x", "--permission-mode", "plan"], scenario=plan, cwd=project)
    assert result.code == 0, result.proc.stderr
    assert not (project / "made-by-bash").exists()
    result.server.assert_done()
    # An allow rule cannot help in plan mode: the trailer says how to leave it instead.
    trailer = result.proc.stderr.splitlines()[-2]
    assert trailer.startswith("lsp-agent: 1 tool call denied (plan mode changes nothing; ")
    assert "--permission-mode default" in trailer
    assert "cannot ask" not in trailer


def test_a_denied_path_is_refused_before_the_tool_looks_at_it(project: Path) -> None:
    # Before the fix, Edit answered "not a regular file" for /dev/null and the call was
    # missing from permission_denials.
    dev_null = scenario(
        reply(
            tool_use(
                "Edit",
                {"file_path": "/dev/null", "old_string": "a", "new_string": "b"},
                id="toolu_dev",
            )
        ),
        reply(
            "Denied.",
            expect=expecting(
                tool_results=[ToolResultExpect(is_error=True, contains="Permission denied")]
            ),
        ),
        name="dev-null",
    )
    result = run_cli(
        [
            "run",
            "-p",
            "x",
            "--permission-mode",
            "bypassPermissions",
            "--disallowedTools",
            "Edit(//dev/**)",
            "--output-format",
            "json",
        ],
        scenario=dev_null,
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    (denial,) = json.loads(result.proc.stdout)["permission_denials"]
    assert denial["tool_name"] == "Edit" and denial["tool_use_id"] == "toolu_dev"
    result.server.assert_done()
