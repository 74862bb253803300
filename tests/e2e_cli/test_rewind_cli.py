"""``lsp-agent rewind``: a headless run's file changes (an Edit and a shell ``rm`` plus a new
file) are listed per prompt and undone from the command line, in a real shadow git store."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use
from tests.e2e_cli.conftest import CALC, RUN_TIMEOUT_S, run_cli


def _rewind(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", "rewind", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_rewind_undoes_a_headless_run(project: Path) -> None:
    (project / "notes.txt").write_text("keep\n")
    ok = ToolResultExpect(is_error=False)
    run = run_cli(
        [
            "run",
            "-p",
            "fix add",
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
        scenario=scenario(
            reply(tool_use("Read", {"file_path": "{{cwd}}/calc.py"})),
            reply(
                tool_use(
                    "Edit",
                    {"file_path": "{{cwd}}/calc.py", "old_string": "a - b", "new_string": "a + b"},
                ),
                tool_use("Bash", {"command": "rm notes.txt && echo new > made.txt"}),
                expect=expecting(tool_results=[ok]),
            ),
            reply("Done.", expect=expecting(tool_results=[ok, ok])),
        ),
        cwd=project,
    )
    assert run.code == 0, run.proc.stderr
    session = run.events()[-1]["session_id"]
    assert not (project / "notes.txt").exists()

    listed = _rewind(project, "--session", session)
    assert listed.returncode == 0, listed.stderr
    [line] = listed.stdout.splitlines()
    message_id, count = line.split()[0], line.split()[1]
    assert count == "3" and line.endswith("fix add")
    newest = _rewind(project)  # without --session: the folder's newest, as -c picks
    assert newest.returncode == 0 and newest.stdout == listed.stdout, newest.stderr
    assert f"session {session} (the newest in this folder)" in newest.stderr

    wrong = _rewind(project, "--session", session, "--to", "zzzzzzzz")
    assert wrong.returncode == 1 and "no prompt 'zzzzzzzz' in session" in wrong.stderr
    # The session by a prefix, as `sessions rm` takes it; a too-short prompt prefix names
    # the minimum.
    short = _rewind(project, "--session", session[:8], "--to", message_id[:4])
    assert short.returncode == 1
    assert f"lsp-agent: error: no prompt '{message_id[:4]}' in session {session}" in short.stderr
    assert "6+ characters" in short.stderr and message_id[:8] in short.stderr
    (project / "calc.py").write_text("# mine\n" + CALC.replace("a - b", "a + b"))

    done = _rewind(project, "--session", session, "--to", message_id[:8])
    assert done.returncode == 0, done.stderr
    assert (project / "calc.py").read_text() == "# mine\n" + CALC  # the user's line is kept
    assert (project / "notes.txt").read_text() == "keep\n"
    assert not (project / "made.txt").exists()
    assert "removed" in done.stdout and "restored" in done.stdout


def test_rewind_both_after_a_run_that_edits_two_files_and_runs_rm(project: Path) -> None:
    """The issue's done-when case, headless: a turn edits two files and runs ``rm``, the user
    then changes one of them; rewinding code and conversation restores all three, keeps the
    user's change, and a resumed run goes on without the rewound prompt."""
    (project / "other.py").write_text("x = 1\n")
    (project / "gone.txt").write_text("keep me\n")
    ok = ToolResultExpect(is_error=False)
    run = run_cli(
        [
            *("-p", "change both and clean up", "--permission-mode", "bypassPermissions"),
            *("--output-format", "stream-json", "--verbose"),
        ],
        scenario=scenario(
            reply(
                tool_use("Read", {"file_path": "{{cwd}}/calc.py"}, id="toolu_r1"),
                tool_use("Read", {"file_path": "{{cwd}}/other.py"}, id="toolu_r2"),
            ),
            reply(
                tool_use(
                    "Edit",
                    {"file_path": "{{cwd}}/calc.py", "old_string": "a - b", "new_string": "a + b"},
                    id="toolu_e1",
                ),
                tool_use(
                    "Edit",
                    {"file_path": "{{cwd}}/other.py", "old_string": "x = 1", "new_string": "x = 2"},
                    id="toolu_e2",
                ),
                tool_use("Bash", {"command": "rm gone.txt"}, id="toolu_rm"),
                expect=expecting(tool_results=[ok, ok]),
            ),
            reply("Done.", expect=expecting(tool_results=[ok, ok, ok])),
        ),
        cwd=project,
    )
    assert run.code == 0, run.proc.stderr
    session = run.events()[-1]["session_id"]
    assert not (project / "gone.txt").exists()
    (project / "calc.py").write_text("# typed later\n" + (project / "calc.py").read_text())

    listed = _rewind(project, "--session", session)
    [line] = listed.stdout.splitlines()
    assert line.split()[1] == "3" and line.endswith("change both and clean up")
    done = _rewind(project, "--session", session, "--to", line.split()[0], "--restore", "both")
    assert done.returncode == 0, done.stderr
    assert (project / "calc.py").read_text() == "# typed later\n" + CALC
    assert (project / "other.py").read_text() == "x = 1\n"
    assert (project / "gone.txt").read_text() == "keep me\n"
    assert "The conversation now ends before that prompt." in done.stdout
    # Nothing is left to rewind to, and the resumed session starts from an empty history.
    assert _rewind(project, "--session", session, "--to", line.split()[0]).returncode == 1
    resumed = run_cli(
        ["-p", "fresh question", "--resume", session, "--output-format", "json"],
        scenario=scenario(reply("Fresh answer.")),
        cwd=project,
    )
    assert resumed.code == 0, resumed.proc.stderr
    [request] = resumed.server.requests
    assert "change both" not in str(request["messages"]) and len(request["messages"]) == 1


def test_rewind_of_the_conversation_names_what_it_cannot_do(project: Path) -> None:
    run = run_cli(
        ["-p", "hello", "--no-session-persistence", "--output-format", "json"],
        scenario=scenario(reply("Hi.")),
        cwd=project,
    )
    assert run.code == 0, run.proc.stderr
    unknown = _rewind(project, "--session", "0" * 32, "--restore", "conversation")
    assert unknown.returncode == 1 and "no session" in unknown.stderr


def test_rewind_without_a_session_in_a_folder_without_one_says_so(tmp_path: Path) -> None:
    empty = _rewind(tmp_path)
    assert empty.returncode == 1
    assert f"no saved session in {tmp_path.resolve()}: give --session ID" in empty.stderr


def test_a_code_rewind_of_an_open_session_says_it_is_not_recorded(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LSP_AGENT_DATA_DIR", str(tmp_path / "data"))
    args = ["run", "-p", "fix add", "--permission-mode", "bypassPermissions"]
    run = run_cli(
        [*args, "--output-format", "json"],
        scenario=scenario(
            reply(tool_use("Read", {"file_path": "{{cwd}}/calc.py"})),
            reply(
                tool_use(
                    "Edit",
                    {"file_path": "{{cwd}}/calc.py", "old_string": "a - b", "new_string": "a + b"},
                )
            ),
            reply("Done."),
        ),
        cwd=project,
    )
    assert run.code == 0, run.proc.stderr
    session = json.loads(run.proc.stdout)["session_id"]
    [transcript] = [p for p in tmp_path.rglob(f"{session}.jsonl")]
    message_id = _rewind(project, "--session", session).stdout.split()[0]
    before = transcript.read_bytes()
    with transcript.open("ab") as held:  # a running lsp-agent holds it open
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = _rewind(project, "--session", session, "--to", message_id)
    assert done.returncode == 0, done.stderr
    assert (project / "calc.py").read_text() == CALC
    assert "its transcript does not record this rewind" in done.stderr
    assert transcript.read_bytes() == before
