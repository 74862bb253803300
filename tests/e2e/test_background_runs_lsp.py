"""A background run started in the terminal (``lsp-agent run -p --bg``) shows in the editor's
session list while it runs: the same session id that ``lsp-agent ps`` lists, with the run's id
(``backgroundRun``), and without it once the run was killed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import reply, scenario
from lsp_agent.testing.scripted import scripted_env
from lsp_agent.testing.thread import ScriptedServerThread

from .conftest import VSCODE_ONLY, Launch

pytestmark = [
    VSCODE_ONLY,
    pytest.mark.skipif(
        not hasattr(socket, "SO_PEERCRED"), reason="the daemon needs Linux peer credentials"
    ),
]

CLI_TIMEOUT_S = 60


def cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


async def test_the_editor_lists_a_running_background_run(
    launch: Launch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    # The editor's server and the command line share this user's runtime folder.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    editor = await launch(scenario(reply("unused")))

    model = ScriptedServerThread(
        scenario=scenario(reply("Working on it...", stall_after_events=2), name="stalled"),
        variables={},
    )
    env = scripted_env(model.start())
    env["LSP_AGENT_MAX_RETRIES"] = "0"
    try:
        started = cli("run", "-p", "refactor the parser", "--bg", env=env, cwd=editor.root)
        assert started.returncode == 0, started.stderr
        run_id, session_id = started.stdout.strip().split("\t")
        (record,) = json.loads(cli("ps", "--json", env=env, cwd=editor.root).stdout)
        assert (record["id"], record["session_id"], record["state"]) == (
            run_id,
            session_id,
            "running",
        )

        listed = await editor.request(methods.SESSION_LIST, {"cwd": str(editor.root)})
        entries: list[dict[str, Any]] = listed["sessions"]
        # Whether the run has saved its first turn yet (adding created, updated, turns) depends
        # on timing; the fields that say who holds the session do not.
        held = ("sessionId", "cwd", "busy", "live", "title", "backgroundRun")
        marked = [{k: e.get(k) for k in held} for e in entries if e.get("backgroundRun")]
        assert marked == [
            {
                "sessionId": session_id,
                "cwd": str(editor.root),
                "busy": True,
                "live": False,
                "title": "refactor the parser",
                "backgroundRun": run_id,
            }
        ]
        # A turn under way is not a turn cut off; the list has a time to show either way.
        (entry,) = [e for e in entries if e.get("backgroundRun")]
        assert not entry.get("interrupted"), entry
        assert (entry.get("updated") or entry.get("created") or "").endswith("Z"), entry
        # The run holds the session (its first turn is not saved yet; once it is, the run
        # holds the transcript's lock): the editor cannot open it meanwhile, and says which
        # run has it and how to follow it (whether or not the transcript exists yet).
        with pytest.raises(JsonRpcException) as refused:
            await editor.request(methods.SESSION_LOAD, {"sessionId": session_id})
        assert f"is in use by background run {run_id}: follow it with `lsp-agent attach " in str(
            refused.value
        )
        assert ".jsonl" not in str(refused.value)
        elsewhere = await editor.request(methods.SESSION_LIST, {"cwd": str(tmp_path)})
        assert all(e["sessionId"] != session_id for e in elsewhere["sessions"])

        killed = cli("kill", run_id, env=env, cwd=editor.root)
        assert killed.returncode == 0, killed.stderr
        after = await editor.request(methods.SESSION_LIST, {"cwd": str(editor.root)})
        assert not [e for e in after["sessions"] if e.get("backgroundRun")]
    finally:
        cli("daemon", "stop", env=env, cwd=editor.root)
        model.stop()
    assert os.stat(runtime / "lsp-agent" / "runs").st_mode & 0o777 == 0o700
