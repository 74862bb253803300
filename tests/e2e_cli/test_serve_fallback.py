"""``lsp-agent serve --fallback-model``: when the model stays overloaded (HTTP 529 after the
retries) the server's sessions switch to the fallback model, as ``run -p`` does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lsp_agent.testing.scenario import error, reply, scenario
from lsp_agent.testing.scripted import scripted_env
from lsp_agent.testing.thread import ScriptedServerThread
from tests.e2e_cli.test_serve import TIMEOUT_S, Wire

OVERLOADED = [error(529, "Overloaded", type="overloaded_error", retry_after_s=0) for _ in range(5)]
"""The first request and its four retries (the server's default)."""


def test_serve_switches_to_the_fallback_model(tmp_path: Path) -> None:
    server = ScriptedServerThread(
        scenario=scenario(*OVERLOADED, reply("Answered by the fallback."), name="overloaded")
    )
    base_url = server.start()
    env = scripted_env(base_url, model="opus")
    env["HOME"] = str(tmp_path)
    env["LSP_AGENT_DATA_DIR"] = str(tmp_path / "data")
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "serve", "--fallback-model", "haiku"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    wire = Wire(proc)
    try:
        folder = {"uri": tmp_path.as_uri(), "name": "ws"}
        wire.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "capabilities": {}, "workspaceFolders": [folder]},
            }
        )
        wire.response(1)
        wire.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        wire.send({"jsonrpc": "2.0", "id": 2, "method": "lspAgent/session/new", "params": {}})
        session = wire.response(2)["result"]["sessionId"]
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
        wire.send(
            {"jsonrpc": "2.0", "id": 3, "method": "lspAgent/session/prompt", "params": prompt}
        )
        answer = wire.response(3)
        wire.send({"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
        wire.response(4)
        wire.send({"jsonrpc": "2.0", "method": "exit"})
        _, err = proc.communicate(timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        server.stop()
    assert answer.get("result", {}).get("stopReason") == "end_turn", answer
    models = [body["model"] for body in server.requests]
    assert models[0] == "claude-opus-4-8" and models[-1] == "claude-haiku-4-5"
    assert b"using haiku instead" in err
    server.assert_done()
