"""A server ended by a signal while a Bash command runs takes the command along (SIGTERM,
SIGHUP, SIGINT and SIGKILL alike), and SIGINT never leaves a deaf server behind."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import reply, scenario, tool_use
from tests.procs import live_pids_mentioning

from .scripted_process import ScriptedProcess
from .wire import WAIT_S, RawServer


def _until(predicate: object) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    "sig",
    [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGKILL],
    ids=lambda s: signal.Signals(s).name,
)
def test_a_signalled_server_leaves_no_commandlive_pids_mentioning(tmp_path: Path, sig: int) -> None:
    marker = f"signal-marker-{uuid.uuid4().hex[:8]}"
    root = tmp_path / "ws"
    root.mkdir()
    steps = scenario(reply(tool_use("Bash", {"command": f"sleep 60; echo {marker}"})), reply("x"))
    with ScriptedProcess(steps, tmp_path) as model:
        server = RawServer(root=root, env={"ANTHROPIC_BASE_URL": model.base_url})
        try:
            assert server.initialize() is not None
            created = server.request("lspAgent/session/new", {"mode": "bypassPermissions"})
            assert created is not None, server.stderr()
            session = created["result"]["sessionId"]
            server.send(
                {
                    "jsonrpc": "2.0",
                    "id": "turn",
                    "method": "lspAgent/session/prompt",
                    "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]},
                }
            )
            assert _until(lambda: live_pids_mentioning(marker)), (
                "the command never started: " + server.stderr()
            )

            os.kill(server.proc.pid, sig)
            server.proc.wait(WAIT_S)
            assert _until(lambda: not live_pids_mentioning(marker)), (
                f"still running after {sig}: {live_pids_mentioning(marker)}"
            )
        finally:
            server.close()
