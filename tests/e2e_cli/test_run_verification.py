"""``lsp-agent run -p --diagnostics FILE``: the run verifies its edits with a managed ruff server,
and the model's next request carries the report for the exact text written."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from lsp_agent.testing.scenario import text as say
from lsp_agent.testing.wire import user_message_text
from tests.e2e_cli.conftest import CALC, run_cli

RUFF_VERIFY = {"timeoutMs": 20_000}
"""Generous: the first check includes starting ruff (never a timing assertion)."""


def ruff_command() -> str:
    beside = Path(sys.executable).with_name("ruff")
    command = str(beside) if beside.exists() else shutil.which("ruff")
    assert command is not None, "ruff is a dev dependency"
    return command


def diagnostics_file(root: Path, **verify: Any) -> Path:
    path = root.parent / "diagnostics.json"
    path.write_text(
        json.dumps(
            {
                "verify": {**RUFF_VERIFY, **verify},
                "servers": [
                    {
                        "name": "ruff",
                        "command": [ruff_command(), "server"],
                        "filetypes": ["*.py"],
                        "languageId": "python",
                    }
                ],
            }
        )
    )
    return path


def edit(old: str, new: str, id: str) -> Any:
    return tool_use(
        "Edit",
        {"file_path": "{{cwd}}/calc.py", "old_string": old, "new_string": new},
        id=id,
    )


def read_calc() -> Any:
    return reply(tool_use("Read", {"file_path": "{{cwd}}/calc.py"}, id="toolu_read"))


def last_user_texts(requests: list[dict[str, Any]]) -> list[str]:
    return [user_message_text(body["messages"][-1]) for body in requests]


def test_an_unused_import_is_reported_in_the_next_request(project: Path) -> None:
    steps = scenario(
        reply(
            tool_use("Read", {"file_path": "{{cwd}}/calc.py"}, id="toolu_read"),
            expect=expecting(tools_include=["Edit", "LSP", "Rename"], last_user_contains="import"),
        ),
        reply(edit("def add(a, b):", "import os\n\n\ndef add(a, b):", "toolu_import")),
        reply(
            "I added an import ruff says is unused.",
            expect=expecting(
                last_user_contains="[Ruff F401]",
                tool_results=[ToolResultExpect(is_error=False)],
            ),
        ),
        name="unused_import",
    )
    config = diagnostics_file(project)
    result = run_cli(
        [
            "run",
            "-p",
            "add an import of os",
            "--permission-mode",
            "acceptEdits",
            "--diagnostics",
            str(config),
            "--output-format",
            "stream-json",
        ],
        scenario=steps,
        cwd=project,
    )
    assert result.code == 0, result.proc.stdout + result.proc.stderr
    result.server.assert_done()
    assert (project / "calc.py").read_text() == "import os\n\n\n" + CALC
    report = last_user_texts(result.server.requests)[2]
    # The report is about the text on disk after the edit, and names the new problem.
    assert "<diagnostics-after-edit>" in report
    assert "calc.py (disk; checked by ruff): 1 new warning/info" in report
    assert "NEW warning calc.py:1:8 [Ruff F401]" in report
    assert "      1 | import os" in report
    # stream-json shows the verdict as the tool progress of a `think` call.
    events = result.events()
    (verdict,) = [e["verification"] for e in events if "verification" in e]
    assert verdict["complete"] is True
    assert [d["code"] for d in verdict["files"][0]["new"]] == ["F401"]
    assert events[0]["tools"][-2:] == ["LSP", "Rename"]


def test_fix_mode_nudges_until_the_syntax_error_is_gone(project: Path) -> None:
    steps = scenario(
        read_calc(),
        reply(
            say("Adding a helper."),
            edit("    return a - b\n", "    return a - b\n\n\ndef sub(a, b:\n    return a\n", "t1"),
        ),
        reply(
            "Done.",  # the model claims success although the file does not parse
            expect=expecting(last_user_contains="NEW error calc.py:5:14 [Ruff invalid-syntax]"),
        ),
        reply(
            edit("def sub(a, b:", "def sub(a, b):", "t2"),
            expect=expecting(last_user_contains="- calc.py:5:14 [Ruff invalid-syntax]"),
        ),
        reply(
            "Fixed the syntax error.",
            expect=expecting(
                last_user_contains="(disk; checked by ruff): no new problems, 2 fixed"
            ),
        ),
        name="syntax_error_fix_mode",
    )
    config = diagnostics_file(project, mode="fix")
    result = run_cli(
        ["run", "-p", "add sub", "--permission-mode", "acceptEdits", "--diagnostics", str(config)],
        scenario=steps,
        cwd=project,
    )
    assert result.code == 0, result.proc.stdout + result.proc.stderr
    result.server.assert_done()
    assert result.proc.stdout == "Fixed the syntax error.\n"
    nudge = last_user_texts(result.server.requests)[3]
    assert nudge.startswith("Before you finish: your edits left new errors")
    assert "def sub(a, b):" in (project / "calc.py").read_text()


def test_a_bad_diagnostics_file_is_a_usage_error(project: Path) -> None:
    config = project.parent / "diagnostics.json"
    config.write_text(json.dumps({"verify": {"mode": "sometimes"}}))
    result = run_cli(
        ["run", "-p", "hi", "--diagnostics", str(config)], scenario=scenario(), cwd=project
    )
    assert result.code == 2
    assert f"--diagnostics {config}: diagnostics.verify.mode: Input should be" in (
        result.proc.stderr
    )
    assert result.server.requests == []

    missing = run_cli(
        ["run", "-p", "hi", "--diagnostics", "nope.json"], scenario=scenario(), cwd=project
    )
    assert missing.code == 2
    assert "--diagnostics 'nope.json': no such file" in missing.proc.stderr
