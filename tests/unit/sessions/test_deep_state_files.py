"""The user's own state files (approvals, the session index) nested deeper than the JSON
parser goes read as "nothing recorded", like any other broken file: fail closed, never a
RecursionError out of a reader documented never to raise."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.context.memory.approvals import ImportApprovals
from lsp_agent.mcp.approvals import approvals_path, load_approvals
from lsp_agent.store.index import INDEX_FILE, list_sessions

DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.fixture
def deep_file(tmp_path: Path) -> Path:
    path = tmp_path / "state.json"
    path.write_text(DEEP)
    return path


def test_mcp_approvals(tmp_path: Path) -> None:
    path = approvals_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(DEEP)
    assert load_approvals(tmp_path, tmp_path / "proj") == {}


def test_memory_import_approvals(deep_file: Path, tmp_path: Path) -> None:
    assert ImportApprovals(path=deep_file).get(tmp_path) == "ask"


def test_the_session_index(tmp_path: Path) -> None:
    (tmp_path / INDEX_FILE).write_text(DEEP)
    assert list_sessions(tmp_path) == []
