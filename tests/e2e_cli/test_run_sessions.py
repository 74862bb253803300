"""``run -p`` with saved sessions: ``--continue``, ``--resume [ID]``, ``--fork-session``,
``--session-id``, ``--no-session-persistence``, and slash commands in a continued session."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import expecting, reply, scenario

from .conftest import run_cli


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "data"
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(data))
    return data


def json_result(stdout: str) -> dict[str, object]:
    result: dict[str, object] = json.loads(stdout)
    return result


def test_continue_resume_and_fork(project: Path, data_dir: Path) -> None:
    first = run_cli(
        ["run", "-p", "remember 42", "--output-format", "json"],
        scenario=scenario(reply("Remembered.")),
        cwd=project,
    )
    assert first.code == 0, first.proc.stderr
    session = json_result(first.proc.stdout)["session_id"]
    assert isinstance(session, str)

    again = run_cli(
        ["run", "-p", "what number?", "--continue", "--output-format", "json"],
        scenario=scenario(reply("42.", expect=expecting(last_user_contains="what number?"))),
        cwd=project,
    )
    assert again.code == 0, again.proc.stderr
    assert json_result(again.proc.stdout)["session_id"] == session
    sent = again.server.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "remember 42" in json.dumps(sent[0])

    new_id = str(uuid.uuid4())
    forked = run_cli(
        [
            "run",
            "-p",
            "fork it",
            "--resume",
            session,
            "--fork-session",
            "--session-id",
            new_id,
            "--output-format",
            "json",
        ],
        scenario=scenario(reply("Forked.")),
        cwd=project,
    )
    assert forked.code == 0, forked.proc.stderr
    assert json_result(forked.proc.stdout)["session_id"] == new_id
    assert len(forked.server.requests[0]["messages"]) == 5
    # The original did not get the fork's turn.
    plain = run_cli(
        ["run", "-p", "/cost", "--resume", session],
        scenario=scenario(),
        cwd=project,
    )
    assert plain.code == 0, plain.proc.stderr
    assert "Tokens used in this session" in plain.proc.stdout
    transcripts = sorted(p.stem for p in data_dir.glob("projects/*/*.jsonl"))
    assert transcripts == sorted([session, new_id])


def test_fork_ids_are_uuids_and_resume_takes_what_was_shown(project: Path) -> None:
    first = run_cli(
        ["run", "-p", "one", "--output-format", "json"],
        scenario=scenario(reply("One.")),
        cwd=project,
    )
    assert first.code == 0, first.proc.stderr
    forked = run_cli(
        ["run", "-p", "two", "-c", "--fork-session", "--output-format", "json"],
        scenario=scenario(reply("Two.")),
        cwd=project,
    )
    assert forked.code == 0, forked.proc.stderr
    fork_id = json_result(forked.proc.stdout)["session_id"]
    assert isinstance(fork_id, str)
    assert fork_id == str(uuid.UUID(fork_id))  # canonical: 8-4-4-4-12, lower case
    # The fork's id in another form (no dashes, upper case), and a unique prefix of it.
    for given in (uuid.UUID(fork_id).hex.upper(), fork_id[:8]):
        again = run_cli(
            ["run", "-p", "/cost", "--resume", given, "--output-format", "json"],
            scenario=scenario(),
            cwd=project,
        )
        assert again.code == 0, (given, again.proc.stderr)
        assert json_result(again.proc.stdout)["session_id"] == fork_id
    short = run_cli(["run", "-p", "hi", "--resume", fork_id[:3]], scenario=scenario(), cwd=project)
    assert short.code == 1
    assert f"lsp-agent: error: no saved session '{fork_id[:3]}'" in short.proc.stderr
    assert "6+ characters" in short.proc.stderr


def test_session_flags_errors(project: Path, data_dir: Path) -> None:
    nothing = run_cli(["run", "-p", "hi", "--continue"], scenario=scenario(), cwd=project)
    # A session that does not exist is "not found" (1), as for sessions rm, rewind, attach.
    assert nothing.code == 1 and "no saved session in" in nothing.proc.stderr
    unknown = run_cli(["run", "-p", "hi", "--resume", "nope"], scenario=scenario(), cwd=project)
    assert unknown.code == 1 and "no saved session 'nope'" in unknown.proc.stderr
    assert "6+ characters" in unknown.proc.stderr
    bad = run_cli(["run", "-p", "hi", "--session-id", "x"], scenario=scenario(), cwd=project)
    assert bad.code == 2 and "--session-id must be a UUID" in bad.proc.stderr
    lone = run_cli(["run", "-p", "hi", "--fork-session"], scenario=scenario(), cwd=project)
    assert lone.code == 2 and "--fork-session needs --continue or --resume" in lone.proc.stderr


def test_no_session_persistence_writes_nothing(project: Path, data_dir: Path) -> None:
    run = run_cli(
        ["run", "-p", "hi", "--no-session-persistence"],
        scenario=scenario(reply("Hello.")),
        cwd=project,
    )
    assert run.code == 0, run.proc.stderr
    assert list(data_dir.glob("projects/*/*.jsonl")) == []


def test_a_session_held_by_a_background_run_names_the_run(project: Path, data_dir: Path) -> None:
    """The transcript is locked as a running background run locks it, and the runs folder
    holds that run's record: ``--resume`` and ``-c`` name the run, ``attach`` and the flag."""
    import fcntl
    import os
    import time

    from lsp_agent.store.private import ensure_private_dir, runs_dir
    from lsp_agent.store.runs import RunRecord, new_run_id, write_record

    first = run_cli(
        ["run", "-p", "one", "--output-format", "json"],
        scenario=scenario(reply("One.")),
        cwd=project,
    )
    assert first.code == 0, first.proc.stderr
    session = json_result(first.proc.stdout)["session_id"]
    assert isinstance(session, str)
    [transcript] = data_dir.glob(f"projects/*/{session}.jsonl")
    folder = runs_dir(os.environ)
    ensure_private_dir(folder.parent)
    ensure_private_dir(folder)
    run_id = new_run_id(folder)
    record = RunRecord(
        id=run_id,
        session_id=session,
        pid=os.getpid(),
        cwd=str(project),
        argv=("run", "-p", "long job", "--resume", session),
        prompt="long job",
        started=time.time(),
    )
    write_record(folder, record)
    with transcript.open("ab") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        for flags in (["--resume", session], ["-c"]):
            refused = run_cli(["run", "-p", "two", *flags], scenario=scenario(), cwd=project)
            assert refused.code == 1
            line = refused.proc.stderr.strip()
            assert line.startswith(f"lsp-agent: error: session {session} is in use by background")
            assert f"background run {run_id}" in line
            assert f"`lsp-agent attach {run_id}`" in line
            assert "--fork-session" in line
        forked = run_cli(
            ["run", "-p", "two", "-c", "--fork-session", "--output-format", "json"],
            scenario=scenario(reply("Two.")),
            cwd=project,
        )
        assert forked.code == 0, forked.proc.stderr
