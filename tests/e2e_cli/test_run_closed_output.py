"""``lsp-agent -p`` whose output cannot be written: stdout on a full device ends the run with
one line naming the problem and exit code 1 (no traceback); a closed stdout or stderr
(``>&-``, ``2>&-``) is no error: the run does its work and says what it can where it can."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import reply, scenario
from lsp_agent.testing.thread import ScriptedServerThread
from tests.e2e_cli.conftest import RUN_TIMEOUT_S, cli_env


def _run(
    project: Path, shell_redirect: str, *args: str, stdout: int | None = None
) -> tuple[subprocess.CompletedProcess[bytes], ScriptedServerThread]:
    server = ScriptedServerThread(scenario=scenario(reply("Hi.")), variables={})
    base_url = server.start()
    try:
        proc = subprocess.run(
            [
                *("sh", "-c", f'exec "$@" {shell_redirect}', "sh"),
                *(sys.executable, "-m", "lsp_agent", "run", "-p", "hello", *args),
            ],
            cwd=project,
            env=cli_env(base_url),
            stdout=subprocess.PIPE if stdout is None else stdout,
            stderr=subprocess.PIPE,
            timeout=RUN_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    finally:
        server.stop()
    return proc, server


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_stdout_on_a_full_device_is_one_error_line(project: Path, output_format: str) -> None:
    with open("/dev/full", "wb") as full:
        proc, _ = _run(project, "", "--output-format", output_format, stdout=full.fileno())
    assert proc.returncode == 1
    assert proc.stderr == b"lsp-agent: error: cannot write the output: No space left on device\n"


@pytest.mark.parametrize("output_format", ["text", "stream-json"])
def test_a_closed_stdout_is_no_error(project: Path, output_format: str) -> None:
    proc, server = _run(project, ">&-", "--output-format", output_format)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    server.server.assert_done()  # the model was asked: the run did its work


def test_a_closed_stderr_is_no_error(project: Path) -> None:
    proc, _ = _run(project, "2>&-")
    assert proc.returncode == 0
    assert proc.stdout == b"Hi.\n"
