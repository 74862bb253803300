"""Project-server approvals in the user's state folder: where the file is, its mode, the
one-time move of the file earlier versions kept in ``~/.lsp-agent``, fail-closed reading."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from lsp_agent.mcp.approvals import (
    LEGACY_FILE,
    Approval,
    approvals_path,
    load_approvals,
    record_approval,
    state_dir,
)


def test_the_file_lives_in_the_state_folder_with_mode_0600(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "p"
    assert state_dir(home).is_relative_to(home) and state_dir(home).name == "lsp-agent"
    record_approval(home, project, server="fx", digest="d1", approved=True)
    path = approvals_path(home)
    assert path.parent == state_dir(home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_approvals(home, project) == {"fx": Approval(digest="d1", approved=True)}
    assert not (home / ".lsp-agent").exists()


def test_the_old_file_is_moved_once(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "p"
    old = home / LEGACY_FILE
    old.parent.mkdir(parents=True)
    entry = {"fx": {"digest": "d0", "approved": True}}
    old.write_text(json.dumps({"version": 1, "projects": {str(project): entry}}))
    assert load_approvals(home, project) == {"fx": Approval(digest="d0", approved=True)}
    assert not old.exists() and approvals_path(home).is_file()
    assert stat.S_IMODE(approvals_path(home).stat().st_mode) == 0o600
    # Once moved, a stale old file (restored from a backup, say) no longer counts.
    old.write_text(json.dumps({"version": 1, "projects": {str(project): {}}}))
    record_approval(home, project, server="other", digest="d2", approved=False)
    assert set(load_approvals(home, project)) == {"fx", "other"}
    assert old.exists()  # left alone: the new file wins


def test_a_broken_file_approves_nothing(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "p"
    path = approvals_path(home)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert load_approvals(home, project) == {}


def _answer_many(home: str, prefix: str) -> None:
    for i in range(30):
        record_approval(
            Path(home), Path("/project"), server=f"{prefix}{i}", digest="d", approved=True
        )


def test_answers_saved_at_once_by_two_processes_are_all_kept(tmp_path: Path) -> None:
    """The editor's server and ``lsp-agent mcp approve`` answer at the same time."""
    import multiprocessing

    spawn = multiprocessing.get_context("spawn")
    workers = [spawn.Process(target=_answer_many, args=(str(tmp_path), p)) for p in "ab"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    assert len(load_approvals(tmp_path, Path("/project"))) == 60
