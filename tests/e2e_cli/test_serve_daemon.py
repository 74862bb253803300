"""``lsp-agent serve --daemon``: while the editor's language server runs, a daemon it started
serves the terminal's ``run -p``; the server's exit stops that daemon, never one the user had
started, and the LSP wire on stdout stays clean."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e_cli.conftest import RUN_TIMEOUT_S, daemon_command, run_cli
from tests.e2e_cli.test_run_formats import ARGS, FIXED, fix_add
from tests.e2e_cli.test_serve import Wire, parse_frames

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="the daemon needs Linux peer credentials"
)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Path]:
    """A private runtime directory; any daemon left in it is stopped afterwards."""
    base = tmp_path / "run"
    base.mkdir(mode=0o700)
    yield base
    _daemon("stop", base)


def _daemon(action: str, runtime: Path) -> str:
    return daemon_command(action, {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}).stdout


def _wait_for(predicate: str, runtime: Path) -> str:
    """``daemon status`` once it contains ``predicate`` (bounded by RUN_TIMEOUT_S, which is a
    guard against a hang, not a timing assertion)."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        status = _daemon("status", runtime)
        if predicate in status or time.monotonic() > deadline:
            return status
        time.sleep(0.2)


def _editor(runtime: Path, project: Path) -> tuple[subprocess.Popen[bytes], Wire]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "serve", "--daemon"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
    )
    wire = Wire(proc)
    wire.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": project.as_uri(), "capabilities": {}},
        }
    )
    assert wire.response(1)["result"]["serverInfo"]["name"] == "lsp-agent"
    wire.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    return proc, wire


def _close(proc: subprocess.Popen[bytes], wire: Wire) -> tuple[int, bytes]:
    try:
        wire.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        assert wire.response(2)["result"] is None
        wire.send({"jsonrpc": "2.0", "method": "exit"})
        rest, _ = proc.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, wire.raw + rest


def test_the_editor_server_keeps_a_daemon_for_the_terminal(project: Path, runtime: Path) -> None:
    proc, wire = _editor(runtime, project)
    status = _wait_for("daemon: running", runtime)
    assert "lsp-agent daemon: running" in status, status

    result = run_cli(
        [*ARGS, "--output-format", "json"],
        scenario=fix_add(),
        cwd=project,
        extra_env={"XDG_RUNTIME_DIR": str(runtime)},
    )
    assert result.code == 0, result.proc.stderr
    assert (project / "calc.py").read_text() == FIXED
    assert "1 served" in _daemon("status", runtime)

    code, out = _close(proc, wire)
    assert code == 0
    parse_frames(out)  # starting the daemon wrote nothing to the LSP wire
    assert _wait_for("not running", runtime).strip() == "lsp-agent daemon: not running"


def test_a_daemon_the_user_started_outlives_the_editor(project: Path, runtime: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "lsp_agent", "daemon", "start"],
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
        capture_output=True,
        timeout=RUN_TIMEOUT_S,
        check=True,
    )
    before = _daemon("status", runtime)
    proc, wire = _editor(runtime, project)
    code, _ = _close(proc, wire)
    assert code == 0
    after = _daemon("status", runtime)
    assert (
        "running" in after
        and after.split("(pid")[1].split(",")[0] == before.split("(pid")[1].split(",")[0]
    )
