"""A background run started in the terminal asks the user's editor about a tool call the
permission engine would ask about: the editor's server sees the pending request, asks with
``window/showMessageRequest`` ("Allow once" / "Deny", no "always"), and the run allows or
denies that one call as the user answered."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import reply, scenario, tool_use
from lsp_agent.testing.scripted import scripted_env
from lsp_agent.testing.thread import ScriptedServerThread

from .conftest import VSCODE_ONLY, Launch
from .test_background_runs_lsp import CLI_TIMEOUT_S, cli

pytestmark = [
    VSCODE_ONLY,
    pytest.mark.skipif(
        not hasattr(socket, "SO_PEERCRED"), reason="the daemon needs Linux peer credentials"
    ),
]


async def test_the_editor_allows_one_call_and_denies_another(
    launch: Launch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    # The editor's server and the command line share this user's runtime folder.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    editor = await launch(scenario(reply("unused")))
    editor.message_answers.extend(["Allow once", "Deny"])

    model = ScriptedServerThread(
        scenario=scenario(
            reply(tool_use("Bash", {"command": "touch allowed.txt"}, id="toolu_allowed")),
            reply(tool_use("Bash", {"command": "touch denied.txt"}, id="toolu_denied")),
            reply("One file made."),
        ),
        variables={},
    )
    env = scripted_env(model.start())
    env["LSP_AGENT_MAX_RETRIES"] = "0"
    env["LSP_AGENT_BG_APPROVAL_TIMEOUT_S"] = "60"
    try:
        started = await asyncio.to_thread(
            cli, "run", "-p", "make two files", "--bg", env=env, cwd=editor.root
        )
        assert started.returncode == 0, started.stderr
        run_id, _session_id = started.stdout.strip().split("\t")
        deadline = time.monotonic() + CLI_TIMEOUT_S
        record: dict[str, object] = {"state": "running"}
        while record["state"] == "running" and time.monotonic() < deadline:
            # The test's loop must stay free: it is the editor answering the questions.
            await asyncio.sleep(0.2)
            listed = await asyncio.to_thread(cli, "ps", "--json", env=env, cwd=editor.root)
            (record,) = json.loads(listed.stdout)
        logs = cli("logs", run_id, env=env, cwd=editor.root)
        assert record["state"] == "done", (record, logs.stdout, logs.stderr)
        assert logs.stdout == "One file made.\n"
    finally:
        cli("daemon", "stop", env=env, cwd=editor.root)
        model.stop()

    assert (editor.root / "allowed.txt").exists()
    assert not (editor.root / "denied.txt").exists()
    asked = editor.message_requests
    assert [[a.title for a in (p.actions or [])] for p in asked] == [["Allow once", "Deny"]] * 2
    # Every editor window of the user asks: the question names the run (its prompt) and folder.
    where = editor.root.resolve()
    opening = f'Background run {run_id} ("make two files") in {where} asks to use Bash: '
    assert asked[0].message.startswith(opening)
    assert "touch allowed.txt" in asked[0].message
    assert "touch denied.txt" in asked[1].message
    # The model was told the second call was denied in the editor.
    denied = [
        r
        for r in model.requests
        if "The user denied this in the editor." in json.dumps(r.get("messages", []))
    ]
    assert denied
    runs = runtime / "lsp-agent" / "runs"
    assert not [p for p in runs.iterdir() if p.suffix in (".ask", ".answer")]
