"""Harness for ``lsp-agent`` as a subprocess: a temp project, the scripted Messages-API server
on 127.0.0.1 (in a thread of the test process) playing the model, and helpers to run
``python -m lsp_agent ...`` against it."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.scenario import Scenario
from lsp_agent.testing.scripted import scripted_env
from lsp_agent.testing.thread import ScriptedServerThread

RUN_TIMEOUT_S = 60
"""Upper bound for one CLI run; generous, never a timing assertion."""

CALC = "def add(a, b):\n    return a - b\n"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every CLI run gets an empty home and runtime directory: the user's own
    ``~/.claude/settings.json`` must not change what a test sees."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    # Nor may a background daemon of the user's take over the runs (its socket lives here).
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A tiny project with one module whose ``add`` subtracts."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    return root.resolve()


@dataclass
class Run:
    """One finished CLI run and the scripted server it talked to."""

    proc: subprocess.CompletedProcess[str]
    server: ScriptedServerThread

    @property
    def code(self) -> int:
        return self.proc.returncode

    def events(self) -> list[dict[str, Any]]:
        """stdout parsed as JSON lines (stream-json)."""
        return [json.loads(line) for line in self.proc.stdout.splitlines() if line.strip()]


def cli_env(base_url: str, **extra: str) -> dict[str, str]:
    """Environment for the CLI: the scripted endpoint, no retries (failures are immediate)."""
    env = scripted_env(base_url)
    env["LSP_AGENT_MAX_RETRIES"] = "0"
    env.pop("PYTEST_ADDOPTS", None)
    env.update(extra)
    return env


def run_cli(
    args: Sequence[str],
    *,
    scenario: Scenario,
    cwd: Path,
    env: dict[str, str] | None = None,
    extra_env: dict[str, str] | None = None,
    stdin_text: str | None = None,
) -> Run:
    """Run ``python -m lsp_agent ARGS`` in ``cwd`` against ``scenario`` (``{{cwd}}`` is
    ``cwd``); the server is stopped afterwards and returned for inspection. ``extra_env`` is
    added to the default environment. ``stdin_text`` is piped to the process (default: stdin
    is ``/dev/null``)."""
    server = ScriptedServerThread(scenario=scenario, variables={"cwd": str(cwd)})
    base_url = server.start()
    try:
        proc = run_process(
            [sys.executable, "-m", "lsp_agent", *args],
            cwd=cwd,
            env=env or cli_env(base_url, **(extra_env or {})),
            stdin_text=stdin_text,
        )
    finally:
        server.stop()
    return Run(proc=proc, server=server)


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path | None,
    env: dict[str, str],
    stdin_text: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to its end in ``cwd`` (``None``: this process's folder) with exactly
    ``env``, its output captured as text; ``stdin_text`` is piped to it (default: stdin is
    ``/dev/null``). Raises ``subprocess.TimeoutExpired`` after :data:`RUN_TIMEOUT_S` seconds;
    a non-zero exit is returned, not raised."""
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        input=stdin_text,
        stdin=subprocess.DEVNULL if stdin_text is None else None,
        check=False,
    )


def daemon_command(action: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``lsp-agent daemon ACTION`` (``start``, ``stop``, ``status``) run to its end with exactly
    ``env``, whose ``XDG_RUNTIME_DIR`` names the daemon's folder (see :func:`run_process`)."""
    return run_process([sys.executable, "-m", "lsp_agent", "daemon", action], cwd=None, env=env)


@contextlib.contextmanager
def another_build_daemon(runtime: Path) -> Iterator[None]:
    """A daemon socket under ``runtime`` (the ``XDG_RUNTIME_DIR``) that answers its first
    connection as a daemon of an older lsp-agent does: it refuses the run, naming its build."""
    folder = runtime / "lsp-agent"
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    old = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old.bind(str(folder / "daemon.sock"))
    os.chmod(folder / "daemon.sock", 0o600)
    old.listen(4)

    def answer() -> None:
        conn, _ = old.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b'{"error": "the daemon runs another build of lsp-agent (0.old)"}\n')

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join(RUN_TIMEOUT_S)
        old.close()
