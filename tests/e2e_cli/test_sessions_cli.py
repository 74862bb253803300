"""``lsp-agent sessions``: the saved sessions of a folder listed headless (text and JSON,
``--all`` for every project) and removed with ``sessions rm`` (asks, ``--yes``, refused while
the session is open), after real ``run -p`` runs against the scripted model."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import reply, scenario
from tests.e2e_cli.conftest import RUN_TIMEOUT_S, run_cli


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "data"
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(data))
    return data


def _sessions(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", "sessions", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _run(cwd: Path, prompt: str) -> str:
    run = run_cli(
        ["-p", prompt, "--output-format", "json"], scenario=scenario(reply("Ok.")), cwd=cwd
    )
    assert run.code == 0, run.proc.stderr
    session_id: str = json.loads(run.proc.stdout)["session_id"]
    return session_id


def test_sessions_lists_removes_and_refuses(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    empty = _sessions(project)
    assert empty.returncode == 0 and empty.stdout == ""
    assert f"no saved session in {project}" in empty.stderr

    first = _run(project, "first question")
    second = _run(project, "second question")
    elsewhere = _run(other, "question elsewhere")

    listed = _sessions(project)
    assert listed.returncode == 0, listed.stderr
    header, *lines = listed.stdout.splitlines()
    assert header.split() == ["SESSION", "UPDATED", "TURNS", "MODEL", "TITLE"]
    assert [line.split()[0] for line in lines] == [second, first]  # newest first
    assert "  1 turn  " in lines[0] and lines[0].endswith("  second question")
    # Columns line up under the header.
    assert lines[0].index("1 turn ") == header.index("TURNS")
    assert lines[0].index("second question") == header.index("TITLE")

    data = json.loads(_sessions(project, "--json").stdout)
    assert [s["session_id"] for s in data] == [second, first]
    assert data[0]["title"] == "second question" and data[0]["turns"] == 1
    assert data[0]["cwd"] == str(project) and data[0]["model"]
    everywhere = json.loads(_sessions(project, "--all", "--json").stdout)
    assert {s["session_id"] for s in everywhere} == {first, second, elsewhere}
    every = _sessions(project, "--all").stdout
    assert str(other) in every and every.split("\n", 1)[0].split()[4] == "FOLDER"

    # rm: never without a confirmation; a prefix that names nothing here changes nothing.
    unconfirmed = _sessions(project, "rm", first)
    assert unconfirmed.returncode == 1 and "--yes" in unconfirmed.stderr
    missing = _sessions(project, "rm", elsewhere, "--yes")  # another project's session
    assert missing.returncode == 1
    assert f"lsp-agent: error: no saved session '{elsewhere}' in {project}" in missing.stderr
    short = _sessions(project, "rm", first[:3], "--yes")
    assert short.returncode == 1 and "6+ characters" in short.stderr
    nameless = _sessions(project, "rm", "--yes")
    assert nameless.returncode == 2 and "sessions rm needs a session id" in nameless.stderr

    # A session open in a running lsp-agent holds its transcript locked: refused.
    [path] = [Path(s["path"]) for s in _index(tmp_path) if s["session_id"] == second]
    with path.open("ab") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        busy = _sessions(project, "rm", second, "--yes")
    assert busy.returncode == 1 and "open in a running lsp-agent" in busy.stderr
    assert path.exists()

    removed = _sessions(project, "rm", first[:8], "--yes")
    assert removed.returncode == 0, removed.stderr
    assert f"removed session {first} (first question)" in removed.stdout
    assert [s["session_id"] for s in json.loads(_sessions(project, "--json").stdout)] == [second]


def _index(tmp_path: Path) -> list[dict[str, str]]:
    raw = json.loads((tmp_path / "data" / "index.json").read_text())
    return list(raw["sessions"].values())
