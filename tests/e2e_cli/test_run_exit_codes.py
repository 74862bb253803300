"""``lsp-agent run -p`` exit codes: 3 at --max-turns, 1 when the model is unreachable (and,
for every subcommand, when what it names is not found), 2 for usage errors, 130 after SIGINT
(with the turn cancelled cleanly)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from lsp_agent.testing.scenario import reply, scenario, tool_use
from lsp_agent.testing.thread import ScriptedServerThread
from tests.e2e_cli.conftest import RUN_TIMEOUT_S, cli_env, run_cli


def test_max_turns_exits_3(project: Path) -> None:
    two_turns = scenario(
        reply(tool_use("Read", {"file_path": "{{cwd}}/calc.py"})),
        reply("never reached"),
        name="two_turns",
    )
    result = run_cli(
        ["run", "-p", "look", "--max-turns", "1", "--output-format", "json"],
        scenario=two_turns,
        cwd=project,
    )
    assert result.code == 3, result.proc.stderr
    obj = json.loads(result.proc.stdout)
    assert (obj["subtype"], obj["is_error"]) == ("error_max_turns", True)
    assert obj["stop_reason"] == "tool_use"  # the API's, of the last response
    assert obj["num_turns"] == 1
    assert result.server.unconsumed() == [1]  # the second request was never made


def test_max_turns_text_mode_explains_on_stderr(project: Path) -> None:
    one = scenario(reply(tool_use("Read", {"file_path": "{{cwd}}/calc.py"})), name="one")
    result = run_cli(["run", "-p", "look", "--max-turns", "1"], scenario=one, cwd=project)
    assert result.code == 3
    assert "reached the maximum number of turns (1)" in result.proc.stderr


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_endpoint_exits_1_with_a_clear_message(project: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there any more
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "run", "-p", "hello", "--output-format", "json"],
        cwd=project,
        env=cli_env(url),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    obj = json.loads(proc.stdout)
    assert (obj["subtype"], obj["is_error"]) == ("error_during_execution", True)
    (error,) = obj["errors"]
    assert url in error or "127.0.0.1" in error, error
    assert "connect" in error.lower(), error


def test_unreachable_endpoint_text_mode(project: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "run", "-p", "hello"],
        cwd=project,
        env=cli_env(f"http://127.0.0.1:{free_port()}"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("lsp-agent: ")


def test_usage_error_exits_2(project: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "run", "-p", "x", "--allowedTools", "Bash(ls"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 2
    assert "unbalanced" in proc.stderr
    assert proc.stdout == ""


def test_sigint_cancels_the_turn_and_exits_130(project: Path) -> None:
    # The model stalls mid-answer; SIGINT must end the run cleanly, not hang or crash.
    stall = scenario(
        reply("thinking about it for a long while", stall_after_events=3), name="stall"
    )
    with ScriptedServerThread(scenario=stall) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "run", "-p", "x", "--output-format", "stream-json"],
            cwd=project,
            env=cli_env(server.base_url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        try:
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            assert server.requests, "the CLI never called the model"
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130, err
    last = json.loads(out.splitlines()[-1])
    # stop_reason is the API's, and the cancelled answer never got one.
    assert (last["type"], last["subtype"], last["stop_reason"]) == (
        "result",
        "error_during_execution",
        None,
    )
    assert "interrupted" in err
    assert "Traceback" not in err


def test_a_session_cut_mid_turn_is_marked_in_the_list(project: Path) -> None:
    # A process killed mid-turn leaves the turn without its end in the transcript.
    stall = scenario(
        reply(tool_use("Read", {"file_path": "{{cwd}}/calc.py"})),
        reply("thinking about it for a long while", stall_after_events=3),
        name="stall-after-a-tool",
    )
    with ScriptedServerThread(scenario=stall) as server:
        env = cli_env(server.base_url)
        proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "run", "-p", "x", "--allowedTools", "Read"],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        try:
            deadline = time.monotonic() + RUN_TIMEOUT_S
            while len(server.requests) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(server.requests) == 2, "the CLI never made its second request"
            proc.kill()
            proc.communicate(timeout=RUN_TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    listed = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "sessions"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    [_header, line] = listed.stdout.splitlines()
    assert line.endswith("(interrupted)"), line


def test_malformed_rule_is_a_usage_error(project: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "run", "-p", "x", "--disallowedTools", "Ed!t"],
        cwd=project,
        env=cli_env("http://127.0.0.1:9"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "malformed permission rule" in proc.stderr
    assert "Ed!t" in proc.stderr
    assert proc.stdout == ""


def test_not_found_exits_1_in_every_subcommand_and_a_wrong_command_line_2(
    project: Path, tmp_path: Path
) -> None:
    """Something named that does not exist (a session, a checkpoint, a background run) is
    exit code 1 whichever command names it; a command line that is itself wrong is 2."""
    missing = "abcdef12"
    data = {"LSP_AGENT_DATA_DIR": str(tmp_path / "data")}
    not_found = [
        ["run", "-p", "hi", "--resume", missing],
        ["run", "-p", "hi", "--continue"],
        ["sessions", "rm", missing, "--yes"],
        ["rewind", "--session", missing, "--to", missing],
        ["attach", missing],
        ["kill", missing],
    ]
    for args in not_found:
        result = run_cli(args, scenario=scenario(), cwd=project, extra_env=data)
        assert result.code == 1, (args, result.proc.stderr)
        assert result.proc.stderr.startswith("lsp-agent: error: "), (args, result.proc.stderr)
        assert result.server.requests == []
    for args in (["run", "-p", "hi", "--no-such-flag"], ["sessions", "rm", "--yes"]):
        result = run_cli(args, scenario=scenario(), cwd=project, extra_env=data)
        assert result.code == 2, (args, result.proc.stderr)
