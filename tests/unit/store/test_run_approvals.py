"""The file protocol between a background run waiting for approval and the editor's server:
only a private, well-formed allow of that very request, in time, allows; everything else
denies."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path

import pytest

from lsp_agent.store.run_approvals import (
    WAIT_S,
    PendingApproval,
    clear,
    new_request,
    pending_requests,
    read_answer,
    wait_for_answer,
    wait_seconds,
    waiting_runs,
    write_answer,
    write_request,
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    return runs


def request(now: float | None = None, wait_s: float = 60.0) -> PendingApproval:
    return new_request(
        run_id="ab12cd34",
        tool="Bash",
        summary="rm -rf build",
        preview="rm -rf build",
        wait_s=wait_s,
        now=time.time() if now is None else now,
    )


def answer_file(folder: Path, pending: PendingApproval) -> Path:
    return folder / f"{pending.stem}.answer"


def test_a_written_request_is_pending_and_private(folder: Path) -> None:
    pending = request()
    write_request(folder, pending)
    path = folder / f"{pending.stem}.ask"
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert pending_requests(folder, now=time.time()) == [pending]
    assert waiting_runs(folder, now=time.time()) == {"ab12cd34"}
    write_answer(folder, pending, "allow")
    assert os.stat(answer_file(folder, pending)).st_mode & 0o777 == 0o600
    assert pending_requests(folder, now=time.time()) == []  # answered
    clear(folder, pending)
    assert sorted(os.listdir(folder)) == []


def test_the_editors_allow_allows_and_deny_denies(folder: Path) -> None:
    pending = request()
    write_request(folder, pending)
    assert read_answer(folder, pending, now=time.time()) is None
    write_answer(folder, pending, "allow")
    assert read_answer(folder, pending, now=time.time()) == "allow"
    write_answer(folder, pending, "deny")
    assert read_answer(folder, pending, now=time.time()) == "deny"


def test_a_second_editors_allow_never_replaces_a_deny(folder: Path) -> None:
    """Every editor window of the user asks; a deny given in one is not undone by an allow
    clicked in another before the run read it (deny beats allow)."""
    pending = request()
    write_request(folder, pending)
    write_answer(folder, pending, "deny")
    write_answer(folder, pending, "allow")
    assert read_answer(folder, pending, now=time.time()) == "deny"
    assert [n for n in os.listdir(folder) if n.endswith(".tmp")] == []


def test_an_answer_to_a_request_that_is_over_is_not_written(folder: Path) -> None:
    """A question answered in a second editor window after the run had its answer (and
    removed the request) leaves no stray answer file behind."""
    pending = request()
    write_request(folder, pending)
    write_answer(folder, pending, "deny")
    clear(folder, pending)
    write_answer(folder, pending, "allow")
    assert os.listdir(folder) == []


def test_an_answer_open_to_others_is_a_denial(folder: Path) -> None:
    pending = request()
    write_request(folder, pending)
    write_answer(folder, pending, "allow")
    for mode in (0o640, 0o604, 0o660):
        os.chmod(answer_file(folder, pending), mode)
        assert read_answer(folder, pending, now=time.time()) == "deny"


def test_a_symlinked_answer_is_a_denial(folder: Path, tmp_path: Path) -> None:
    pending = request()
    real = tmp_path / "elsewhere.json"
    real.write_text(json.dumps({"id": pending.id, "decision": "allow"}))
    real.chmod(0o600)
    answer_file(folder, pending).symlink_to(real)
    assert read_answer(folder, pending, now=time.time()) == "deny"


def test_an_answer_that_is_not_a_file_is_a_denial(folder: Path) -> None:
    pending = request()
    answer_file(folder, pending).mkdir(mode=0o700)
    assert read_answer(folder, pending, now=time.time()) == "deny"


@pytest.mark.parametrize(
    "text",
    [
        "allow",
        "{",
        "[]",
        '{"decision": "allow"}',
        '{"id": "ID", "decision": "Allow"}',
        '{"id": "ID", "decision": "allow_always"}',
        '{"id": "ID", "decision": "allow", "scope": "always"}',
        '{"id": "ID", "decision": true}',
        "\xff\xfe",
        "[" * 100_000,
    ],
)
def test_a_malformed_answer_is_a_denial(folder: Path, text: str) -> None:
    pending = request()
    path = answer_file(folder, pending)
    path.write_bytes(text.replace("ID", pending.id).encode("utf-8", "surrogateescape"))
    path.chmod(0o600)
    assert read_answer(folder, pending, now=time.time()) == "deny"


def test_an_answer_for_another_request_is_a_denial(folder: Path) -> None:
    pending, other = request(), request()
    path = answer_file(folder, pending)
    path.write_text(json.dumps({"id": other.id, "decision": "allow"}))
    path.chmod(0o600)
    assert read_answer(folder, pending, now=time.time()) == "deny"


def test_an_answer_after_the_deadline_is_a_denial(folder: Path) -> None:
    pending = request(now=1000.0, wait_s=10)
    write_request(folder, pending)
    write_answer(folder, pending, "allow")
    assert read_answer(folder, pending, now=1009.0) == "allow"
    assert read_answer(folder, pending, now=1011.0) == "deny"
    assert pending_requests(folder, now=1011.0) == []


def test_requests_the_editor_must_not_trust_are_not_listed(folder: Path, tmp_path: Path) -> None:
    pending = request()
    write_request(folder, pending)
    os.chmod(folder / f"{pending.stem}.ask", 0o644)
    assert pending_requests(folder, now=time.time()) == []
    # A request renamed to another run's name is not that run's.
    os.chmod(folder / f"{pending.stem}.ask", 0o600)
    os.rename(folder / f"{pending.stem}.ask", folder / "ffff0000.0123456789abcdef.ask")
    assert pending_requests(folder, now=time.time()) == []
    # A folder open to others is not read at all.
    write_request(folder, pending)
    folder.chmod(0o755)
    assert pending_requests(folder, now=time.time()) == []


def test_nobody_answering_in_time_denies_and_clears(folder: Path) -> None:
    pending = request(wait_s=0.3)
    answer, answered = asyncio.run(wait_for_answer(folder, pending, poll_s=0.05))
    assert (answer, answered) == ("deny", False)
    assert os.listdir(folder) == []


def test_waiting_returns_the_editors_answer(folder: Path) -> None:
    pending = request(wait_s=30)

    def editor() -> None:
        deadline = time.time() + 20
        while not pending_requests(folder, now=time.time()) and time.time() < deadline:
            time.sleep(0.02)
        (seen,) = pending_requests(folder, now=time.time())
        write_answer(folder, seen, "allow")

    thread = threading.Thread(target=editor)
    thread.start()
    answer, answered = asyncio.run(wait_for_answer(folder, pending, poll_s=0.02))
    thread.join()
    assert (answer, answered) == ("allow", True)
    assert os.listdir(folder) == []


def test_the_wait_can_be_shortened_never_lengthened() -> None:
    assert wait_seconds({}) == WAIT_S == 600
    assert wait_seconds({"LSP_AGENT_BG_APPROVAL_TIMEOUT_S": "5"}) == 5
    for raw in ("6000", "0", "-1", "soon", "nan"):
        assert wait_seconds({"LSP_AGENT_BG_APPROVAL_TIMEOUT_S": raw}) == WAIT_S
