"""``lsp-agent rewind``: a headless run's file changes (an Edit and a shell ``rm`` plus a new
file) are listed per prompt and undone from the command line, in a real shadow git store."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from tests.e2e_cli.conftest import CALC, RUN_TIMEOUT_S, run_cli


def _rewind(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", "rewind", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_rewind_undoes_a_headless_run(project: Path) -> None:
    (project / "notes.txt").write_text("keep\n")
    ok = ToolResultExpect(is_error=False)
    run = run_cli(
        [
            "run",
            "-p",
            "fix add",
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
        scenario=scenario(
            reply(tool_use("Read", {"file_path": "{{cwd}}/calc.py"})),
            reply(
                tool_use(
                    "Edit",
                    {"file_path": "{{cwd}}/calc.py", "old_string": "a - b", "new_string": "a + b"},
                ),
                tool_use("Bash", {"command": "rm notes.txt && echo new > made.txt"}),
                expect=expecting(tool_results=[ok]),
            ),
            reply("Done.", expect=expecting(tool_results=[ok, ok])),
        ),
        cwd=project,
    )
    assert run.code == 0, run.proc.stderr
    session = run.events()[-1]["session_id"]
    assert not (project / "notes.txt").exists()

    listed = _rewind(project, "--session", session)
    assert listed.returncode == 0, listed.stderr
    [line] = listed.stdout.splitlines()
    message_id, count = line.split()[0], line.split()[1]
    assert count == "3" and line.endswith("fix add")

    wrong = _rewind(project, "--session", session, "--to", "zzzzzzzz")
    assert wrong.returncode == 1 and "has no prompt 'zzzzzzzz'" in wrong.stderr
    (project / "calc.py").write_text("# mine\n" + CALC.replace("a - b", "a + b"))

    done = _rewind(project, "--session", session, "--to", message_id[:8])
    assert done.returncode == 0, done.stderr
    assert (project / "calc.py").read_text() == "# mine\n" + CALC  # the user's line is kept
    assert (project / "notes.txt").read_text() == "keep\n"
    assert not (project / "made.txt").exists()
    assert "removed" in done.stdout and "restored" in done.stdout
