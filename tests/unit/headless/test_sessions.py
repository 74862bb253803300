"""``lsp-agent sessions rm`` on a terminal: it asks, and only ``y``/``yes`` removes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from lsp_agent.headless.sessions import SessionsOptions, run_sessions
from lsp_agent.store.paths import transcript_path
from lsp_agent.store.transcript import Transcript

SESSION = "0b5a3c9e-1111-4222-8333-444455556666"


class _Terminal(io.StringIO):
    """Typed answers on a terminal (``isatty``), as the user's keyboard gives them."""

    def isatty(self) -> bool:
        return True


def _saved(data: Path, cwd: Path) -> Path:
    path = transcript_path(data, cwd, SESSION)
    writer = Transcript(path=path, session_id=SESSION)
    writer.append("meta", cwd=str(cwd), model="claude-test", mode="default")
    writer.append("user", prompt=True, promptText="tidy the tests")
    writer.close()
    return path


@pytest.mark.parametrize(("answer", "kept"), [("n\n", True), ("\n", True), ("y\n", False)])
def test_rm_asks_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str, kept: bool
) -> None:
    data, cwd = tmp_path / "data", tmp_path / "proj"
    cwd.mkdir()
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(data))
    path = _saved(data, cwd)
    out, err = io.StringIO(), io.StringIO()
    options = SessionsOptions(
        action="rm", session_id=SESSION[:8], as_json=False, all_projects=False, yes=False, cwd=cwd
    )
    code = run_sessions(options, out=out, err=err, stdin=_Terminal(answer))
    assert f"Remove session {SESSION} (tidy the tests)? [y/N]" in err.getvalue()
    assert path.exists() is kept
    assert code == (1 if kept else 0)
    assert ("removed session" in out.getvalue()) is not kept


def test_a_session_a_background_run_is_running_is_marked_with_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its transcript has no end yet, which alone would read "(interrupted)"."""
    import json
    import os
    import time

    from lsp_agent.store.private import ensure_private_dir, runs_dir
    from lsp_agent.store.runs import RunRecord, write_record

    data, cwd = tmp_path / "data", tmp_path / "proj"
    cwd.mkdir()
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(data))
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    _saved(data, cwd)
    folder = runs_dir(os.environ)
    ensure_private_dir(folder.parent)
    ensure_private_dir(folder)
    run = RunRecord(
        id="3f2a9c1e",
        session_id=SESSION,
        pid=os.getpid(),
        cwd=str(cwd),
        argv=("run", "-p", "tidy the tests"),
        prompt="tidy the tests",
        started=time.time(),
    )
    write_record(folder, run)
    listed = io.StringIO()
    options = SessionsOptions(
        action="list", session_id=None, as_json=False, all_projects=False, yes=False, cwd=cwd
    )
    assert run_sessions(options, out=listed, err=io.StringIO()) == 0
    line = listed.getvalue().strip()
    assert line.endswith("tidy the tests  (background run 3f2a9c1e)"), line
    assert "(interrupted)" not in line
    as_json = io.StringIO()
    json_options = SessionsOptions(
        action="list", session_id=None, as_json=True, all_projects=False, yes=False, cwd=cwd
    )
    run_sessions(json_options, out=as_json, err=io.StringIO())
    assert json.loads(as_json.getvalue())[0]["background_run"] == "3f2a9c1e"
