"""The registry of background runs: records, lookup by id prefix, trust and pruning."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lsp_agent.store.private import ensure_private_dir
from lsp_agent.store.runs import (
    KEEP_ENDED_RUNS,
    KEEP_ENDED_S,
    RunLookupError,
    RunRecord,
    effective,
    find_run,
    finished,
    list_runs,
    prompt_head,
    prune,
    read_record,
    running_sessions,
    write_record,
)

NOW = 1_800_000_000.0


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    ensure_private_dir(runs)
    return runs


def record(run_id: str, *, started: float = NOW, state: str = "done", **extra: object) -> RunRecord:
    data: dict[str, object] = {
        "id": run_id,
        "session_id": f"session-{run_id}",
        "pid": os.getpid(),
        "cwd": "/project",
        "argv": ["run", "-p", "hi"],
        "prompt": "hi",
        "started": started,
        "state": state,
        "exit_code": None if state == "running" else 0,
        "ended": None if state == "running" else started + 1,
        "log": f"/runs/{run_id}.out",
        "err_log": f"/runs/{run_id}.err",
    }
    data.update(extra)
    return RunRecord.from_json(data)


def test_a_record_round_trips_private(folder: Path) -> None:
    original = record("0a1b2c3d", state="running")
    write_record(folder, original)
    path = folder / "0a1b2c3d.json"
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert read_record(path) == original
    assert list(folder.iterdir()) == [path]  # no temporary file left


def test_ids_resolve_by_unique_prefix(folder: Path) -> None:
    for run_id in ("abc123", "abd456", "ff00"):
        write_record(folder, record(run_id))
    assert find_run(folder, "abc").id == "abc123"
    assert find_run(folder, "FF").id == "ff00"
    with pytest.raises(RunLookupError, match="'ab' is ambiguous: it starts abc123, abd456"):
        find_run(folder, "ab")
    with pytest.raises(RunLookupError, match="no background run '99'"):
        find_run(folder, "99")
    with pytest.raises(RunLookupError, match="is not a run id"):
        find_run(folder, "../abc123")


def test_untrusted_records_are_skipped(folder: Path) -> None:
    write_record(folder, record("aaaa"))
    loose = folder / "bbbb.json"
    loose.write_text(json.dumps(record("bbbb").to_json()))
    loose.chmod(0o644)
    renamed = folder / "cccc.json"  # a record whose file name is not its id
    renamed.write_text(json.dumps(record("dddd").to_json()))
    renamed.chmod(0o600)
    (folder / "eeee.json").write_text("{not json")
    (folder / "eeee.json").chmod(0o600)
    (folder / "ffff.json").symlink_to(folder / "aaaa.json")
    (folder / "abab.json").write_text("[" * 100_000)  # RecursionError, not ValueError
    (folder / "abab.json").chmod(0o600)
    assert [r.id for r in list_runs(folder)] == ["aaaa"]
    folder.chmod(0o755)
    assert list_runs(folder) == []


def test_bad_fields_are_named() -> None:
    with pytest.raises(ValueError, match="state"):
        RunRecord.from_json({**record("aa").to_json(), "state": "sleeping"})
    with pytest.raises(ValueError, match="argv"):
        RunRecord.from_json({**record("aa").to_json(), "argv": "run -p"})


def test_ended_runs_are_pruned_by_age_and_count(folder: Path) -> None:
    old = record("01d0", started=NOW - KEEP_ENDED_S - 10)
    write_record(folder, old)
    (folder / "01d0.out").write_text("output")
    ancient_but_running = record("11fe", started=NOW - 10 * KEEP_ENDED_S, state="running")
    write_record(folder, ancient_but_running)
    recent = [f"{i:04x}" for i in range(KEEP_ENDED_RUNS + 3)]
    for index, run_id in enumerate(recent):
        write_record(folder, record(run_id, started=NOW - 100 + index))
    removed = prune(folder, now=NOW)
    assert sorted(removed) == sorted(["01d0", *recent[:3]])
    assert not (folder / "01d0.out").exists()
    kept = {r.id for r in list_runs(folder)}
    assert kept == {"11fe", *recent[3:]}


def test_a_running_record_whose_process_is_gone_reads_failed(folder: Path) -> None:
    child = os.fork()
    if child == 0:  # pragma: no cover - the child ends at once
        os._exit(0)
    os.waitpid(child, 0)
    gone = record("90e0", state="running", pid=child)
    assert effective(gone).state == "failed"
    mine = record("5e1f", state="running")
    assert effective(mine) == mine
    write_record(folder, gone)
    write_record(folder, mine)
    assert running_sessions(folder) == {"session-5e1f": mine}


def test_finished_states() -> None:
    running = record("aa", state="running")
    assert finished(running, exit_code=0, killed=False, now=NOW).state == "done"
    assert finished(running, exit_code=3, killed=False, now=NOW).state == "failed"
    assert finished(running, exit_code=143, killed=True, now=NOW).state == "killed"


def test_prompt_head_keeps_the_first_line() -> None:
    assert prompt_head("  fix the bug\nin calc.py") == "fix the bug"
    assert len(prompt_head("x" * 500)) == 80
    assert prompt_head("") == ""


def test_prune_removes_the_approval_files_of_runs_that_are_not_running(folder: Path) -> None:
    write_record(folder, record("a11e", state="running"))
    write_record(folder, record("dead", state="killed"))
    for name in ("a11e.0123.ask", "dead.4567.ask", "dead.4567.answer", "notes.txt"):
        (folder / name).write_text("{}")
    prune(folder, now=NOW)
    left = sorted(p.name for p in folder.iterdir() if not p.name.endswith(".json"))
    assert left == ["a11e.0123.ask", "notes.txt"]
