"""``run -p`` given hostile input on stdin: each case ends with a clear error naming the
problem and the ordinary exit code for bad input (2), never a traceback, and nothing of it
reaches the model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import reply, scenario
from lsp_agent.testing.thread import ScriptedServerThread

from .conftest import RUN_TIMEOUT_S, cli_env

STREAM = ["run", "-p", "--input-format", "stream-json", "--output-format", "stream-json"]
FIRST = b'{"type":"user","message":{"role":"user","content":"first"}}\n'


def run_bytes(
    args: list[str], data: bytes, cwd: Path, **env: str
) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI with ``data`` (raw bytes) on stdin; one scripted answer for the first
    message, nothing more."""
    server = ScriptedServerThread(scenario=scenario(reply("One.")))
    base_url = server.start()
    try:
        return subprocess.run(
            [sys.executable, "-m", "lsp_agent", *args],
            cwd=cwd,
            env=cli_env(base_url, **env),
            input=data,
            capture_output=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    finally:
        server.stop()


def last_error(proc: subprocess.CompletedProcess[bytes]) -> str:
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert lines and lines[-1]["type"] == "result", proc.stdout
    errors: list[str] = lines[-1]["errors"]
    return errors[0]


@pytest.mark.parametrize("locale", ["C.UTF-8", "C"])
def test_a_stream_json_line_that_is_not_utf8_is_refused(project: Path, locale: str) -> None:
    bad = b'{"type":"user","message":{"content":"caf\xe9 \xff"}}\n'
    proc = run_bytes(STREAM, FIRST + bad, project, LC_ALL=locale, PYTHONIOENCODING="")
    assert proc.returncode == 2, proc.stderr
    assert b"Traceback" not in proc.stderr, proc.stderr
    assert "stdin line 2: not UTF-8" in last_error(proc)


def test_a_stream_json_line_nested_too_deep_is_refused(project: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000 + b"\n"
    proc = run_bytes(STREAM, FIRST + deep, project)
    assert proc.returncode == 2, proc.stderr
    assert b"Traceback" not in proc.stderr, proc.stderr
    assert "stdin line 2: not JSON (nested too deeply)" in last_error(proc)
