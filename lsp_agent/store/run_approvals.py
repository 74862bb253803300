"""Approval of a background run's tool call by the editor, through files in the private runs
folder (:mod:`lsp_agent.store.runs`).

A background run (``lsp-agent run -p --bg``) whose permission decision is *ask* writes
``<run id>.<request id>.ask`` (a :class:`PendingApproval`, ``0600``) and waits until its
deadline for ``<run id>.<request id>.answer`` (``{"id": REQUEST_ID, "decision": "allow" |
"deny"}``), which the user's editor server writes atomically (``0600``, temporary file then
rename) after asking the user. Fail closed: an answer that is a symlink, not a regular file,
not this user's, open to group or others, malformed, for another request, or read after the
deadline is a denial; no answer by the deadline is a denial. An answer allows that one call
only. Plain data and file I/O only; the run writes requests, the editor's server answers them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import stat
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from lsp_agent.store.private import private_dir_problem
from lsp_agent.store.runs import is_run_id

WAIT_S = 600.0
"""How long a background run waits for the editor's answer (seconds; 10 minutes)."""

WAIT_ENV = "LSP_AGENT_BG_APPROVAL_TIMEOUT_S"
"""Environment variable that shortens (never lengthens) :data:`WAIT_S` (seconds)."""

POLL_S = 0.25
"""How often a waiting run looks for the answer (seconds)."""

SUMMARY_CHARS = 300
"""Longest summary line a request carries (characters)."""

PREVIEW_CHARS = 4000
"""Longest preview a request carries (characters). A background run denies a command longer
than this without asking: the question could not show all of what would run."""

Answer = Literal["allow", "deny"]


@dataclass(frozen=True, kw_only=True)
class PendingApproval:
    """One tool call of background run ``run_id`` waiting for the editor. ``deadline`` is in
    seconds since the epoch; ``summary`` a short human line (the command, the path);
    ``preview`` the proposed change or command text, possibly empty."""

    id: str
    run_id: str
    tool: str
    summary: str
    preview: str
    deadline: float

    @property
    def stem(self) -> str:
        """The files' common name: ``<run id>.<request id>``."""
        return f"{self.run_id}.{self.id}"

    @classmethod
    def from_json(cls, data: Any) -> PendingApproval:
        """Parse a request; raises ``ValueError`` naming the first bad field."""
        if not isinstance(data, dict):
            raise ValueError("a request must be a JSON object")
        for name in ("id", "run_id"):
            value = data.get(name)
            if not (isinstance(value, str) and is_run_id(value)):
                raise ValueError(name)
        for name in ("tool", "summary", "preview"):
            if not isinstance(data.get(name), str):
                raise ValueError(name)
        deadline = data.get("deadline")
        if not isinstance(deadline, int | float) or isinstance(deadline, bool):
            raise ValueError("deadline")
        return cls(
            id=data["id"],
            run_id=data["run_id"],
            tool=data["tool"],
            summary=data["summary"],
            preview=data["preview"],
            deadline=float(deadline),
        )


def wait_seconds(environ: dict[str, str] | Any) -> float:
    """:data:`WAIT_S`, or the shorter positive number of seconds in :data:`WAIT_ENV`."""
    raw = str(environ.get(WAIT_ENV, "") or "")
    try:
        value = float(raw)
    except ValueError:
        return WAIT_S
    return value if 0 < value < WAIT_S else WAIT_S


def new_request(
    *, run_id: str, tool: str, summary: str, preview: str, wait_s: float, now: float
) -> PendingApproval:
    """A fresh request (random 16-hex-digit id) due ``wait_s`` seconds after ``now``."""
    return PendingApproval(
        id=secrets.token_hex(8),
        run_id=run_id,
        tool=tool,
        summary=summary[:SUMMARY_CHARS],
        preview=preview[:PREVIEW_CHARS],
        deadline=now + wait_s,
    )


def write_request(folder: Path, pending: PendingApproval) -> None:
    """Write ``<stem>.ask`` atomically (``0600``). Raises ``OSError``."""
    _write_private(folder, f"{pending.stem}.ask", asdict(pending))


def write_answer(folder: Path, pending: PendingApproval, answer: Answer) -> None:
    """The editor's answer to ``pending``: ``<stem>.answer`` written atomically (``0600``,
    temporary file then rename). Every editor window of the user asks, so answers can meet:
    a deny replaces an earlier answer, an allow never does (deny beats allow), and nothing is
    written once the request is over (its ``.ask`` removed by the run). Raises ``OSError``."""
    if not (folder / f"{pending.stem}.ask").exists():
        return
    data = {"id": pending.id, "decision": answer}
    _write_private(folder, f"{pending.stem}.answer", data, replace=answer == "deny")


def read_answer(folder: Path, pending: PendingApproval, *, now: float) -> Answer | None:
    """The answer to ``pending``: ``None`` while there is none (and the deadline has not
    passed); ``"allow"`` only for a trusted, well-formed allow of this very request read
    before the deadline; ``"deny"`` for everything else (fail closed)."""
    if now > pending.deadline:
        return "deny"
    path = folder / f"{pending.stem}.answer"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError:  # a symlink (ELOOP) or anything else odd
        return "deny"
    try:
        data = _trusted_json(fd)
    finally:
        os.close(fd)
    if not isinstance(data, dict) or data.get("id") != pending.id:
        return "deny"
    return "allow" if data.get("decision") == "allow" and len(data) == 2 else "deny"


def pending_requests(folder: Path, *, now: float) -> list[PendingApproval]:
    """The trusted, unanswered requests in ``folder`` still before their deadline, oldest
    deadline first; ``[]`` when the folder is missing or not private to this user."""
    if private_dir_problem(folder):
        return []
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".ask"))
    except OSError:
        return []
    found: list[PendingApproval] = []
    for name in names:
        pending = _read_request(folder / name)
        if pending is None or f"{pending.stem}.ask" != name or now > pending.deadline:
            continue
        if not (folder / f"{pending.stem}.answer").exists():
            found.append(pending)
    return sorted(found, key=lambda p: p.deadline)


def waiting_runs(folder: Path, *, now: float) -> set[str]:
    """Ids of the runs with a request waiting for the editor."""
    return {p.run_id for p in pending_requests(folder, now=now)}


def clear(folder: Path, pending: PendingApproval) -> None:
    """Remove the request and its answer (missing ones are fine)."""
    for suffix in (".ask", ".answer"):
        with contextlib.suppress(OSError):
            (folder / f"{pending.stem}{suffix}").unlink()


async def wait_for_answer(
    folder: Path, pending: PendingApproval, *, poll_s: float = POLL_S
) -> tuple[Answer, bool]:
    """Write ``pending``, wait for its answer until the deadline, then remove both files.
    Returns ``(answer, answered)``: ``answered`` is ``False`` when nobody answered in time
    (the answer is then ``"deny"``). Raises ``OSError`` when the request cannot be written."""
    write_request(folder, pending)
    try:
        while True:
            now = time.time()
            if now > pending.deadline:
                return "deny", False
            answer = read_answer(folder, pending, now=now)
            if answer is not None:
                return answer, True
            await asyncio.sleep(poll_s)
    finally:
        clear(folder, pending)


def _read_request(path: Path) -> PendingApproval | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        data = _trusted_json(fd)
    finally:
        os.close(fd)
    try:
        return PendingApproval.from_json(data)
    except ValueError:
        return None


def _trusted_json(fd: int) -> Any:
    """The JSON in ``fd`` when it is a regular file of this user closed to others, else
    ``None``."""
    try:
        info = os.fstat(fd)
        if info.st_uid != os.getuid() or info.st_mode & 0o077 or not stat.S_ISREG(info.st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return json.loads(handle.read(1 << 20))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None


def _write_private(folder: Path, name: str, data: dict[str, Any], *, replace: bool = True) -> None:
    """Write ``name`` atomically; without ``replace`` an existing file is kept."""
    target = folder / name
    temp = folder / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        if replace:
            os.replace(temp, target)
        else:
            with contextlib.suppress(FileExistsError):
                os.link(temp, target)  # atomic, and fails when the file exists
            temp.unlink()
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
