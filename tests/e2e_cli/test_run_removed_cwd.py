"""``lsp-agent -p`` started in a folder that was removed (a shell still in it): one line naming
the problem and the way out, exit code 2, no traceback; ``--cwd`` with an absolute folder
still runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lsp_agent.testing.scenario import reply, scenario
from lsp_agent.testing.thread import ScriptedServerThread
from tests.e2e_cli.conftest import cli_env, run_process


def _run_in_removed_folder(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    gone = tmp_path / "gone"
    gone.mkdir()
    server = ScriptedServerThread(scenario=scenario(reply("Hi.")), variables={})
    base_url = server.start()
    try:
        return run_process(
            # The shell enters the folder, removes it, then becomes the CLI.
            [
                *("sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", str(gone)),
                *(sys.executable, "-m", "lsp_agent", "run", "-p", "hello", *args),
            ],
            cwd=None,
            env=cli_env(base_url),
        )
    finally:
        server.stop()


def test_a_removed_current_folder_is_named_without_a_traceback(tmp_path: Path) -> None:
    run = _run_in_removed_folder(tmp_path)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.startswith("lsp-agent: error: the current folder no longer exists")
    assert "--cwd" in run.stderr
    assert run.stdout == ""


def test_an_absolute_cwd_runs_from_a_removed_folder(tmp_path: Path, project: Path) -> None:
    run = _run_in_removed_folder(tmp_path, "--cwd", str(project))
    assert run.returncode == 0, run.stderr
    assert run.stdout == "Hi.\n"
