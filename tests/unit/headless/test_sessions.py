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
