"""``run -p`` given hostile input: a stdin line that cannot be read ends the run with a clear
error naming the problem and the exit code for bad input (2), never a traceback, and nothing of
it reaches the model; garbage from the model becomes a tool error the model sees."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from lsp_agent.testing.thread import ScriptedServerThread

from .conftest import RUN_TIMEOUT_S, cli_env, run_cli

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


def test_a_tool_input_nested_too_deeply_is_a_tool_error_and_the_turn_goes_on(
    project: Path,
) -> None:
    deep = '{"file_path": ' + "[" * 100_000 + "]" * 100_000 + "}"
    result = run_cli(
        ["run", "-p", "read it", "--output-format", "json"],
        scenario=scenario(
            reply(tool_use("Read", input_json=deep)),
            reply("After.", expect=expecting(tool_results=[ToolResultExpect(is_error=True)])),
        ),
        cwd=project,
    )
    assert result.code == 0, result.proc.stdout
    assert json.loads(result.proc.stdout)["result"] == "After."
    result.server.assert_done()


@pytest.mark.parametrize("flag", ["--mcp-config", "--diagnostics"])
def test_a_file_flag_nested_too_deeply_is_a_usage_error(
    project: Path, tmp_path: Path, flag: str
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    result = run_cli(["run", "-p", "hi", flag, str(deep)], scenario=scenario(), cwd=project)
    assert result.code == 2, result.proc.stderr
    assert "Traceback" not in result.proc.stderr
    assert f"{flag} " in result.proc.stderr and "nested too deeply" in result.proc.stderr
