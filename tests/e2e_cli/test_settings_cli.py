"""``lsp-agent run -p`` with settings files: the project's ``.claude/settings.json`` applies (a
headless run trusts its directory) — its allow rules, its deny rules (even in
``bypassPermissions``) and its hooks — ``--settings FILE`` adds a layer, and settings problems
are printed to stderr."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsp_agent.testing.scenario import (
    Scenario,
    ToolResultExpect,
    expecting,
    reply,
    scenario,
    tool_use,
)
from tests.e2e_cli.conftest import CALC, Run, run_cli

PYTEST = "python -m pytest -q -p no:cacheprovider test_calc.py"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 0\n"


def run(args: Sequence[str], *, steps: Scenario, project: Path, home: Path) -> Run:
    """``python -m lsp_agent ARGS`` in ``project`` against ``steps``, with ``home`` as the
    home directory (no stray user settings) and this interpreter first on ``PATH`` (so the
    agent's ``python -m pytest`` finds pytest)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return run_cli(args, scenario=steps, cwd=project, extra_env={"HOME": str(home), "PATH": path})


def settings(project: Path, value: dict[str, Any] | str) -> Path:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def pytest_scenario(*, allowed: bool) -> Scenario:
    result = (
        ToolResultExpect(is_error=False, contains="1 passed")
        if allowed
        else ToolResultExpect(is_error=True, contains="Permission denied")
    )
    return scenario(
        reply(tool_use("Bash", {"command": PYTEST}, id="toolu_pytest")),
        reply("Tests pass.", expect=expecting(tool_results=[result])),
    )


def test_a_project_allow_rule_lets_pytest_run_without_asking(project: Path, tmp_path: Path) -> None:
    (project / "test_calc.py").write_text(TEST_CALC)
    settings(project, {"permissions": {"allow": ["Bash(python -m pytest:*)"]}})
    result = run(
        ["run", "-p", "run the tests", "--permission-mode", "default", "--output-format", "json"],
        steps=pytest_scenario(allowed=True),
        project=project,
        home=tmp_path,
    )
    assert result.code == 0, result.proc.stderr
    result.server.assert_done()
    final = json.loads(result.proc.stdout)
    assert final["permission_denials"] == []


def test_without_the_rule_the_same_command_is_denied(project: Path, tmp_path: Path) -> None:
    (project / "test_calc.py").write_text(TEST_CALC)
    result = run(
        ["run", "-p", "run the tests", "--permission-mode", "default", "--output-format", "json"],
        steps=pytest_scenario(allowed=False),
        project=project,
        home=tmp_path,
    )
    assert result.code == 0, result.proc.stderr
    result.server.assert_done()
    (denial,) = json.loads(result.proc.stdout)["permission_denials"]
    assert denial["tool_name"] == "Bash"


def edit_scenario(result: ToolResultExpect) -> Scenario:
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
    )


def test_a_deny_rule_blocks_an_edit_even_in_bypass_permissions(
    project: Path, tmp_path: Path
) -> None:
    settings(project, {"permissions": {"deny": ["Edit(/calc.py)"]}})
    result = run(
        ["run", "-p", "fix add", "--permission-mode", "bypassPermissions"],
        steps=edit_scenario(
            ToolResultExpect(is_error=True, contains="denied by the rule Edit(/calc.py)")
        ),
        project=project,
        home=tmp_path,
    )
    assert result.code == 0, result.proc.stderr
    result.server.assert_done()
    assert (project / "calc.py").read_text() == CALC


def test_bypass_permissions_edits_without_the_deny_rule(project: Path, tmp_path: Path) -> None:
    result = run(
        ["run", "-p", "fix add", "--permission-mode", "bypassPermissions"],
        steps=edit_scenario(ToolResultExpect(is_error=False)),
        project=project,
        home=tmp_path,
    )
    assert result.code == 0, result.proc.stderr
    assert (project / "calc.py").read_text() == CALC.replace("a - b", "a + b")


def test_settings_flag_adds_a_layer_and_default_mode_applies(project: Path, tmp_path: Path) -> None:
    extra = tmp_path / "ci-settings.json"
    extra.write_text(json.dumps({"permissions": {"defaultMode": "acceptEdits"}}))
    result = run(
        ["run", "-p", "fix add", "--settings", str(extra), "--output-format", "stream-json"],
        steps=edit_scenario(ToolResultExpect(is_error=False)),
        project=project,
        home=tmp_path,
    )
    assert result.code == 0, result.proc.stderr
    assert result.events()[0]["permissionMode"] == "acceptEdits"
    assert (project / "calc.py").read_text() == CALC.replace("a - b", "a + b")


def test_a_missing_settings_file_is_a_usage_error(project: Path, tmp_path: Path) -> None:
    result = run(
        ["run", "-p", "hi", "--settings", str(tmp_path / "nope.json")],
        steps=scenario(),
        project=project,
        home=tmp_path,
    )
    assert result.code == 2
    assert "--settings" in result.proc.stderr and "no such file" in result.proc.stderr


def test_settings_problems_are_printed_and_never_widen(project: Path, tmp_path: Path) -> None:
    broken = '{"permissions": {"allow": ["Edit"]} "defaultMode": "bypassPermissions"}'
    settings(project, broken)
    result = run(
        ["run", "-p", "fix add", "--permission-mode", "bypassPermissions"],
        # The denial names the broken file, not the stand-in rule that asked.
        steps=edit_scenario(
            ToolResultExpect(
                is_error=True,
                contains=f"{project / '.claude' / 'settings.json'} has errors, so every change "
                "asks until it is fixed) and this is a non-interactive run. No flag can allow it",
            )
        ),
        project=project,
        home=tmp_path,
    )
    assert result.code == 0, result.proc.stderr
    stderr = result.proc.stderr
    lines = [line for line in stderr.splitlines() if "settings.json" in line]
    column = broken.index('"defaultMode"') + 1  # 1-based, as editors print it
    assert any(f"settings.json:1:{column}: error: invalid JSON" in line for line in lines), lines
    assert "WARNING" not in stderr, stderr  # no raw log line
    # Why the mode is not honoured, and a trailer naming the broken file where it fails
    # (no flag can allow a change while it is broken).
    where = f"{project / '.claude' / 'settings.json'}:1:{column}"
    assert f"lsp-agent: --permission-mode bypassPermissions is off: {where} is broken" in stderr, (
        stderr
    )
    assert f"denied (fix {where}: while a settings file is broken" in stderr, stderr
    assert "allow with --allowedTools" not in stderr, stderr
    assert (project / "calc.py").read_text() == CALC


def test_project_hooks_run_in_a_headless_run(project: Path, tmp_path: Path) -> None:
    sentinel = tmp_path / "hook-ran"
    hook = tmp_path / "hook.py"
    hook.write_text(
        "import json, sys\n"
        f"open({str(sentinel)!r}, 'w').write(json.load(sys.stdin)['hook_event_name'])\n"
    )
    command = f"{sys.executable} {hook}"
    settings(
        project,
        {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}},
    )
    result = run(
        ["run", "-p", "hello"], steps=scenario(reply("hi")), project=project, home=tmp_path
    )
    assert result.code == 0, result.proc.stderr
    assert sentinel.read_text() == "UserPromptSubmit"
