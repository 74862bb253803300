"""The registry of background runs (``lsp-agent run -p --bg``): one small JSON file per run and
its captured output, in a folder private to the user.

The folder is ``<runtime dir>/runs`` — the runtime directory of the daemon that starts the runs
(``$XDG_RUNTIME_DIR/lsp-agent``, else ``/tmp/lsp-agent-<uid>``) — created ``0700``; every file
in it is created ``0600``. A reader trusts the folder only when it belongs to the user and is
closed to others (:func:`private_dir_problem`), and skips files that are not the user's or are
open to others, so another local user cannot plant or read a run.

Per run ``<id>``: ``<id>.json`` (a :class:`RunRecord`), ``<id>.out`` and ``<id>.err`` (the bytes
the run wrote to stdout and stderr, exactly what a foreground run would have printed). Runs
that ended are pruned: those ended more than :data:`KEEP_ENDED_S` ago, and all but the newest
:data:`KEEP_ENDED_RUNS` ended ones. Plain data and file I/O only; the daemon writes the records,
the command line and the editor's server read them.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from lsp_agent.store.private import private_dir_problem

RunState = Literal["running", "done", "failed", "killed"]
"""``running``; ``done`` (exit code 0); ``failed`` (another exit code, or the run ended without
its daemon seeing it); ``killed`` (ended by ``lsp-agent kill``)."""

STATES: tuple[RunState, ...] = ("running", "done", "failed", "killed")

KEEP_ENDED_S = 7 * 24 * 3600
"""Ended runs older than this (seconds; 7 days) are removed with their output."""

KEEP_ENDED_RUNS = 50
"""At most this many ended runs are kept (the newest)."""

PROMPT_HEAD_CHARS = 80
"""How much of the prompt a record keeps (characters)."""

RUN_ENV = "LSP_AGENT_BACKGROUND_RUN"
"""Set by the daemon in a background run's environment: the run's id. A tool call the
permission engine would ask about then waits for the editor (``store.run_approvals``)."""

_ID_CHARS = frozenset("0123456789abcdef")


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """One background run. Times are seconds since the epoch; ``exit_code`` follows the shell
    (128 + N for a run ended by signal N); ``session_id`` is ``None`` when the run continues
    the newest session of its folder (known only once it starts)."""

    id: str
    session_id: str | None
    pid: int
    cwd: str
    argv: tuple[str, ...]
    prompt: str
    started: float
    state: RunState = "running"
    exit_code: int | None = None
    ended: float | None = None
    log: str = ""
    """The captured stdout (``<id>.out``)."""
    err_log: str = ""
    """The captured stderr (``<id>.err``)."""

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data (``argv`` a list)."""
        data = asdict(self)
        data["argv"] = list(self.argv)
        return data

    @classmethod
    def from_json(cls, data: Any) -> RunRecord:
        """Parse a record; raises ``ValueError`` naming the first bad field."""
        if not isinstance(data, dict):
            raise ValueError("a run record must be a JSON object")
        run_id = data.get("id")
        if not (isinstance(run_id, str) and is_run_id(run_id)):
            raise ValueError("id")
        argv = data.get("argv")
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
            raise ValueError("argv")
        state = data.get("state")
        if state not in STATES:
            raise ValueError("state")
        for name, kind in (("pid", int), ("cwd", str), ("prompt", str), ("log", str)):
            if not isinstance(data.get(name), kind):
                raise ValueError(name)
        started, ended, code = data.get("started"), data.get("ended"), data.get("exit_code")
        session_id = data.get("session_id")
        if not isinstance(started, int | float):
            raise ValueError("started")
        if ended is not None and not isinstance(ended, int | float):
            raise ValueError("ended")
        if code is not None and not isinstance(code, int):
            raise ValueError("exit_code")
        if session_id is not None and not isinstance(session_id, str):
            raise ValueError("session_id")
        return cls(
            id=run_id,
            session_id=session_id,
            pid=int(data["pid"]),
            cwd=str(data["cwd"]),
            argv=tuple(argv),
            prompt=str(data["prompt"]),
            started=float(started),
            state=state,
            exit_code=code,
            ended=None if ended is None else float(ended),
            log=str(data["log"]),
            err_log=str(data.get("err_log") or ""),
        )


class RunLookupError(LookupError):
    """No run, or more than one, matches an id prefix; the message names the problem."""


def is_run_id(text: str) -> bool:
    """Whether ``text`` has the form of a run id (lowercase hex, 1-32 characters)."""
    return 0 < len(text) <= 32 and set(text) <= _ID_CHARS


def new_run_id(folder: Path) -> str:
    """A fresh id (8 hex digits) not used in ``folder``."""
    import secrets

    while True:
        run_id = secrets.token_hex(4)
        if not (folder / f"{run_id}.json").exists():
            return run_id


def prompt_head(prompt: str) -> str:
    """The first line of ``prompt``, at most :data:`PROMPT_HEAD_CHARS` characters."""
    line = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return line if len(line) <= PROMPT_HEAD_CHARS else line[: PROMPT_HEAD_CHARS - 1] + "…"


def create_output(path: Path) -> int:
    """Create the output file ``path`` (``0600``, must not exist) for writing; returns its
    descriptor (the caller closes it). Raises ``OSError``."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)


def write_record(folder: Path, record: RunRecord) -> None:
    """Write ``record`` as ``<folder>/<id>.json`` atomically (``0600``). Raises ``OSError``."""
    target = folder / f"{record.id}.json"
    temp = folder / f".{record.id}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record.to_json(), handle)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def read_record(path: Path) -> RunRecord | None:
    """The record in ``path``, or ``None`` when it is missing, unreadable, malformed, not this
    user's or open to others (never trusted then)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.getuid() or info.st_mode & 0o077 or not stat.S_ISREG(info.st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = json.loads(handle.read(1 << 20))
        record = RunRecord.from_json(data)
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)
    return record if path.name == f"{record.id}.json" else None


def list_runs(folder: Path) -> list[RunRecord]:
    """Every trusted record in ``folder``, newest first; ``[]`` when the folder is missing or
    not private to this user."""
    if private_dir_problem(folder):
        return []
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json") and not n.startswith(".")]
    except OSError:
        return []
    records = [r for r in (read_record(folder / name) for name in names) if r is not None]
    return sorted(records, key=lambda r: r.started, reverse=True)


def find_run(folder: Path, prefix: str) -> RunRecord:
    """The run whose id is or starts with ``prefix``. Raises :class:`RunLookupError` naming
    the problem: no such run, or several match (their ids listed)."""
    text = prefix.strip().lower()
    if not is_run_id(text):
        raise RunLookupError(f"{prefix!r} is not a run id (hex digits, as `lsp-agent ps` shows)")
    matches = [r for r in list_runs(folder) if r.id.startswith(text)]
    if not matches:
        raise RunLookupError(f"no background run {prefix!r} (see `lsp-agent ps`)")
    exact = [r for r in matches if r.id == text]
    if exact:
        return exact[0]
    if len(matches) > 1:
        ids = ", ".join(r.id for r in matches)
        raise RunLookupError(f"{prefix!r} is ambiguous: it starts {ids}")
    return matches[0]


def alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (a zombie counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


SAME_START_S = 10.0
"""How far a process's start may be from its run's ``started`` for it to be that run
(seconds): the daemon records the run just after forking it."""


def started_at(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch, to about a second: the boot
    time in ``/proc/stat`` is whole seconds), from ``/proc/PID/stat`` field 22 (clock ticks
    after boot, proc(5)); ``None`` where ``/proc`` does not say."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22; the fields after ")" start at field 3
        with open("/proc/stat", encoding="utf-8") as handle:
            boot = next(int(line.split()[1]) for line in handle if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def is_run_process(record: RunRecord) -> bool:
    """Whether ``record.pid`` is still the run's process rather than another program that got
    the pid after the run ended unseen: its start time is within :data:`SAME_START_S` of the
    run's. ``False`` where the start time cannot be read (not provably the run)."""
    start = started_at(record.pid)
    return start is not None and abs(start - record.started) <= SAME_START_S


def effective(record: RunRecord) -> RunRecord:
    """``record`` as it stands: a ``running`` record whose process is gone ended without its
    daemon seeing it (the daemon died), and reads as ``failed`` with no exit code."""
    if record.state != "running" or alive(record.pid):
        return record
    return replace(record, state="failed")


def finished(record: RunRecord, *, exit_code: int, killed: bool, now: float) -> RunRecord:
    """``record`` after its process ended with ``exit_code``."""
    state: RunState = "killed" if killed else ("done" if exit_code == 0 else "failed")
    return replace(record, state=state, exit_code=exit_code, ended=now)


def running_sessions(folder: Path) -> dict[str, RunRecord]:
    """Session id → record of the background runs still running in ``folder``."""
    return {
        r.session_id: r
        for r in map(effective, list_runs(folder))
        if r.state == "running" and r.session_id
    }


def prune(folder: Path, *, now: float | None = None) -> list[str]:
    """Remove ended runs past :data:`KEEP_ENDED_S` or beyond the newest
    :data:`KEEP_ENDED_RUNS`, with their output, and the approval files
    (:mod:`lsp_agent.store.run_approvals`) of every run that is not running (one killed while it
    waited for the editor, or whose daemon died); returns the removed run ids."""
    moment = time.time() if now is None else now
    runs = list_runs(folder)
    ended = [r for r in runs if r.state != "running"]
    doomed = [
        r
        for index, r in enumerate(ended)
        if index >= KEEP_ENDED_RUNS or moment - (r.ended or r.started) > KEEP_ENDED_S
    ]
    remove(folder, (r.id for r in doomed))
    if not private_dir_problem(folder):
        live = {r.id for r in map(effective, runs) if r.state == "running"}
        remove_approvals(folder, keep=live)
    return [r.id for r in doomed]


def remove_approvals(folder: Path, *, keep: Iterable[str] = ()) -> None:
    """Delete the approval request and answer files (``<run id>.<request id>.ask`` and
    ``.answer``) of every run but those in ``keep`` (missing folder or files are fine)."""
    kept = set(keep)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        run_id, _, rest = name.partition(".")
        if rest.endswith((".ask", ".answer")) and is_run_id(run_id) and run_id not in kept:
            with contextlib.suppress(OSError):
                (folder / name).unlink()


def remove(folder: Path, ids: Iterable[str]) -> None:
    """Delete the record and output files of ``ids`` (missing ones are fine)."""
    for run_id in ids:
        for suffix in (".out", ".err", ".json"):
            with contextlib.suppress(OSError):
                (folder / f"{run_id}{suffix}").unlink()
