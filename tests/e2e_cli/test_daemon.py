"""``lsp-agent daemon``: ``run -p`` handed to a warm background process gives the same result as
in-process, and every daemon that cannot be trusted or does not answer is passed over.

Each test has its own runtime directory (``XDG_RUNTIME_DIR``), so no daemon of the user's (or
of another test) is ever reached.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.daemon.paths import socket_path
from lsp_agent.daemon.wire import Reader, build_key, send
from lsp_agent.testing.scenario import reply, scenario
from tests.e2e_cli.conftest import (
    RUN_TIMEOUT_S,
    ScriptedServerThread,
    another_build_daemon,
    cli_env,
    run_cli,
)
from tests.e2e_cli.test_run_formats import ARGS, FIXED, fix_add

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="the daemon needs Linux peer credentials"
)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Path]:
    """A private runtime directory; any daemon started in it is stopped afterwards."""
    base = tmp_path / "run"
    base.mkdir(mode=0o700)
    yield base
    env = {**os.environ, "XDG_RUNTIME_DIR": str(base)}
    subprocess.run(
        [sys.executable, "-m", "lsp_agent", "daemon", "stop"],
        env=env,
        capture_output=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def daemon(action: str, runtime: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", "daemon", action],
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def copy_project(project: Path, name: str) -> Path:
    other = project.parent / name
    other.mkdir()
    (other / "calc.py").write_text((project / "calc.py").read_text())
    return other


def test_run_through_the_daemon_equals_the_in_process_run(project: Path, runtime: Path) -> None:
    started = daemon("start", runtime)
    assert started.returncode == 0, started.stderr
    assert "started" in started.stdout
    sock = runtime / "lsp-agent" / "daemon.sock"
    assert (os.stat(sock).st_mode & 0o777, os.stat(sock.parent).st_mode & 0o777) == (0o600, 0o700)

    other = copy_project(project, "prok")  # same length: same token estimate
    results = {}
    for where, cwd in (("daemon", project), ("here", other)):
        extra = {"XDG_RUNTIME_DIR": str(runtime)}
        if where == "here":
            extra["LSP_AGENT_NO_DAEMON"] = "1"
        result = run_cli(
            [*ARGS, "--output-format", "json"],
            scenario=fix_add(),
            cwd=cwd,
            extra_env=extra,
        )
        assert result.code == 0, result.proc.stderr
        assert result.proc.stderr == ""
        result.server.assert_done()
        assert (cwd / "calc.py").read_text() == FIXED
        results[where] = json.loads(result.proc.stdout)

    status = daemon("status", runtime)
    assert "1 served" in status.stdout, status.stdout
    varying = {"session_id", "uuid", "duration_ms", "duration_api_ms"}
    assert {k: v for k, v in results["daemon"].items() if k not in varying} == {
        k: v for k, v in results["here"].items() if k not in varying
    }


def test_exit_code_and_stdin_prompt_pass_through(project: Path, runtime: Path) -> None:
    assert daemon("start", runtime).returncode == 0
    server_scenario = scenario(reply("Answer from stdin."), name="stdin")
    server = ScriptedServerThread(scenario=server_scenario, variables={"cwd": str(project)})
    base_url = server.start()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "lsp_agent", "run", "-p", "-", "--max-turns", "1"],
            cwd=project,
            env=cli_env(base_url, XDG_RUNTIME_DIR=str(runtime)),
            input="say something",
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    finally:
        server.stop()
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "Answer from stdin.\n", "")
    assert "1 served" in daemon("status", runtime).stdout


def _fallback_run(project: Path, runtime: Path) -> subprocess.CompletedProcess[str]:
    result = run_cli(
        ARGS,
        scenario=fix_add(),
        cwd=project,
        extra_env={"XDG_RUNTIME_DIR": str(runtime)},
    )
    assert result.code == 0, result.proc.stderr
    assert result.proc.stdout == "Fixed: add() subtracted.\n"
    assert (project / "calc.py").read_text() == FIXED
    return result.proc


def _socket_file(directory: Path, *, mode: int = 0o700) -> socket.socket:
    directory.mkdir(mode=mode, exist_ok=True)
    os.chmod(directory, mode)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(directory / "daemon.sock"))
    os.chmod(directory / "daemon.sock", 0o600)
    return sock


def test_a_stale_socket_is_noticed_and_the_run_happens_here(project: Path, runtime: Path) -> None:
    _socket_file(runtime / "lsp-agent").close()  # bound, never listening: a daemon that died
    proc = _fallback_run(project, runtime)
    assert "the daemon is not running (stale socket" in proc.stderr
    assert "running without it" in proc.stderr


def test_a_daemon_that_hangs_is_passed_over(project: Path, runtime: Path) -> None:
    hung = _socket_file(runtime / "lsp-agent")
    hung.listen(4)  # accepts connections into the backlog, never answers
    try:
        proc = _fallback_run(project, runtime)
    finally:
        hung.close()
    assert "the daemon did not answer within 1 s" in proc.stderr


def test_a_socket_open_to_others_is_refused(project: Path, runtime: Path) -> None:
    loose = _socket_file(runtime / "lsp-agent", mode=0o755)
    loose.listen(4)
    try:
        proc = _fallback_run(project, runtime)
    finally:
        loose.close()
    assert "is open to other users (mode 755)" in proc.stderr


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_a_socket_of_another_user_is_refused(project: Path, runtime: Path) -> None:
    foreign = _socket_file(runtime / "lsp-agent")
    foreign.listen(4)
    os.chown(runtime / "lsp-agent" / "daemon.sock", 65534, 65534)
    try:
        proc = _fallback_run(project, runtime)
    finally:
        foreign.close()
    assert "belongs to uid 65534, not to this user" in proc.stderr


def test_status_and_stop_name_a_folder_opened_to_others_and_the_fix(runtime: Path) -> None:
    """A running daemon whose folder lost its 0700 is not "not running": status and stop say
    why its socket is not used and how to make the folder private again."""
    assert daemon("start", runtime).returncode == 0
    folder = runtime / "lsp-agent"
    os.chmod(folder, 0o755)
    try:
        for action in ("status", "stop"):
            said = daemon(action, runtime)
            assert said.returncode == 1, (action, said.stdout, said.stderr)
            assert said.stdout == ""
            assert said.stderr == (
                f"lsp-agent: error: cannot use the daemon socket: {folder} is open to other "
                "users (mode 755), so a daemon may be running without being reachable; make "
                f"the folder private again: chmod 700 {folder}\n"
            )
    finally:
        os.chmod(folder, 0o700)
    assert daemon("status", runtime).stdout.startswith("lsp-agent daemon: running")
    assert daemon("stop", runtime).stdout.strip() == "lsp-agent daemon: stopped"


def test_no_daemon_means_a_silent_in_process_run(project: Path, runtime: Path) -> None:
    assert _fallback_run(project, runtime).stderr == ""
    assert daemon("status", runtime).stdout.strip() == "lsp-agent daemon: not running"


def test_a_client_that_sends_part_of_a_line_does_not_stall_the_daemon(
    runtime: Path,
) -> None:
    """The daemon serves every client from one loop: a client dribbling its first message, or
    stopping in the middle of a line while its run goes on, must not hold that loop (before,
    ``daemon status`` said "not running" and finished runs were not reported until it left)."""
    assert daemon("start", runtime).returncode == 0
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    path = str(socket_path(env))

    dribbler = socket.socket(socket.AF_UNIX)
    dribbler.connect(path)
    stop = threading.Event()

    def dribble() -> None:
        with contextlib.suppress(OSError):
            for byte in b'{"op": "status"':
                if stop.wait(0.3):
                    return
                dribbler.send(bytes([byte]))

    thread = threading.Thread(target=dribble, daemon=True)
    thread.start()
    try:
        time.sleep(0.5)
        run = socket.socket(socket.AF_UNIX)
        run.connect(path)
        reader = Reader(run)
        argv = ["--version"]
        send(run, {"op": "run", "build": build_key(), "argv": argv, "cwd": "/", "env": env})
        assert reader.read(deadline=time.monotonic() + RUN_TIMEOUT_S) == {"ok": True, "send": "fds"}
        out_r, out_w = os.pipe()
        null = os.open(os.devnull, os.O_RDWR)
        send(run, {"op": "fds"}, [null, out_w, null])
        os.close(out_w)
        os.close(null)
        started = reader.read(deadline=time.monotonic() + RUN_TIMEOUT_S)
        assert started is not None and started.get("ok") is True
        run.send(b'{"op": "sig')  # and nothing more while the run goes on
        assert daemon("status", runtime).stdout.startswith("lsp-agent daemon: running")
        assert reader.read(deadline=time.monotonic() + RUN_TIMEOUT_S) == {"exit": 0}
        with os.fdopen(out_r, "rb") as output:
            assert output.read().startswith(b"lsp-agent ")
        run.close()
    finally:
        stop.set()
        dribbler.close()


def test_garbage_first_messages_leave_the_daemon_serving(runtime: Path) -> None:
    """Each bad first message is refused and the daemon goes on: deep nesting (which the JSON
    parser answers with RecursionError, not ValueError), invalid UTF-8, not an object, too
    long, and a message closed at once."""
    assert daemon("start", runtime).returncode == 0
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    path = str(socket_path(env))
    bad = [
        b"[" * 200_000 + b"\n",
        b'{"op": "status", "x": "\xff\xfe"}\n',
        b"[1, 2]\n",
        b"x" * (2 << 20),
        b"",
    ]
    for message in bad:
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(path)
        with contextlib.suppress(OSError):
            sock.sendall(message)
        sock.close()
        assert daemon("status", runtime).stdout.startswith("lsp-agent daemon: running"), message[
            :20
        ]


def test_a_daemon_of_another_build_names_the_way_out(project: Path, runtime: Path) -> None:
    with another_build_daemon(runtime):
        proc = _fallback_run(project, runtime)
    assert (
        "lsp-agent: the daemon refused the run: the daemon runs another build of lsp-agent "
        "(0.old) (`lsp-agent daemon stop` ends it once its runs end; `lsp-agent daemon start` "
        "starts a current one); running without it\n"
    ) in proc.stderr
