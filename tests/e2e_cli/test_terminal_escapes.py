"""Prompts, titles and folder names printed by ``lsp-agent ps`` and ``lsp-agent sessions``
reach the terminal with escape sequences escaped: a prompt pasted from a web page or a
title the model wrote could otherwise drive the user's terminal (OSC 52 writes the
clipboard) or break the table with a newline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsp_agent.store.private import ensure_private_dir, runs_dir
from lsp_agent.store.runs import RunRecord, write_record
from lsp_agent.testing.scenario import reply, scenario
from tests.e2e_cli.conftest import RUN_TIMEOUT_S, run_cli

HOSTILE = "\x1b]52;c;aGVsbG8=\x07fix it\nrm -rf ~ \u202eexe.txt"


def _cli(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_ps_escapes_a_runs_prompt_and_folder(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    folder = runs_dir(env)
    ensure_private_dir(runtime / "lsp-agent")
    ensure_private_dir(folder)
    write_record(
        folder,
        RunRecord(
            id="0123abcd",
            session_id=None,
            pid=1,
            cwd=str(tmp_path / "proj\x1b[2Kx"),
            argv=("-p", HOSTILE),
            prompt=HOSTILE,
            started=time.time(),
            state="done",
            exit_code=0,
            ended=time.time(),
        ),
    )
    listed = _cli(tmp_path, env, "ps")
    assert listed.returncode == 0, listed.stderr
    assert "\x1b" not in listed.stdout and "\u202e" not in listed.stdout
    rows = listed.stdout.splitlines()
    assert len(rows) == 2  # header + one run: the prompt's newline stays in its cell
    assert "\\x1b]52;c;aGVsbG8=\\x07fix it\\nrm -rf ~ \\u202eexe.txt" in rows[1]
    assert "proj\\x1b[2Kx" in rows[1]
    # JSON output is data, not terminal text: it keeps the prompt as it was.
    as_json = json.loads(_cli(tmp_path, env, "ps", "--json").stdout)
    assert as_json[0]["prompt"] == HOSTILE


def test_sessions_escapes_a_title(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(data))
    run = run_cli(
        ["-p", HOSTILE, "--output-format", "json"], scenario=scenario(reply("Ok.")), cwd=project
    )
    assert run.code == 0, run.proc.stderr
    session_id = json.loads(run.proc.stdout)["session_id"]
    env = {**os.environ, "LSP_AGENT_DATA_DIR": str(data)}
    listed = _cli(project, env, "sessions")
    assert listed.returncode == 0, listed.stderr
    assert "\x1b" not in listed.stdout and "\u202e" not in listed.stdout
    (_header, line) = listed.stdout.splitlines()
    assert line.startswith(session_id)
    assert "\\x1b]52;c;aGVsbG8=\\x07fix it" in line
