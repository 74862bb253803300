"""The daemon's side of background runs (``lsp-agent run -p --bg``): checking the request,
the output files and record of a run it starts, ending one on ``kill`` (SIGTERM to its process
group, SIGKILL after :data:`KILL_GRACE_S`), and the record's last state when it is reaped.

A background run is an ordinary run of the daemon (a forked child that takes over the
invocation) whose stdout and stderr are files in the registry folder
(:mod:`lsp_agent.store.runs`) instead of the client's, and which no client waits for: the
client gets the run's id and leaves. The daemon stays up while any runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsp_agent.store.runs import (
    RunRecord,
    create_output,
    effective,
    finished,
    list_runs,
    new_run_id,
    prompt_head,
    prune,
    remove_approvals,
    write_record,
)

log = logging.getLogger(__name__)

KILL_GRACE_S = 5.0
"""How long a killed run has between SIGTERM and SIGKILL (seconds)."""


@dataclass(kw_only=True)
class BackgroundRun:
    """A background run the daemon is responsible for."""

    record: RunRecord
    kill_at: float | None = None
    """When SIGKILL follows the SIGTERM of a ``kill`` (monotonic seconds)."""
    killed: bool = False


@dataclass(frozen=True, kw_only=True)
class Outputs:
    """The output files of a run being started: ``fds`` (stdout, stderr) for the child."""

    run_id: str
    out: Path
    err: Path
    fds: tuple[int, int]

    def close(self) -> None:
        """Close the daemon's copies of the descriptors."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def request_problem(message: dict[str, Any]) -> str | None:
    """Why the ``bg`` part of a run request is malformed, or ``None``. It carries the run's
    ``session_id`` (a string, or ``null`` when the run continues the folder's newest session),
    its ``prompt`` (text shown by ``lsp-agent ps``) and its project directory ``cwd``."""
    bg = message.get("bg")
    if not isinstance(bg, dict):
        return "bg must be an object"
    session_id = bg.get("session_id")
    if session_id is not None and not isinstance(session_id, str):
        return "bg.session_id must be a string or null"
    if not isinstance(bg.get("prompt"), str):
        return "bg.prompt must be a string"
    project = bg.get("cwd")
    if not isinstance(project, str) or not os.path.isabs(project):
        return "bg.cwd must be an absolute path"
    return None


def open_outputs(folder: Path) -> Outputs:
    """Prune ended runs, then create a new run's stdout and stderr files (``0600``) in
    ``folder``. Raises ``OSError``."""
    prune(folder)
    run_id = new_run_id(folder)
    out, err = folder / f"{run_id}.out", folder / f"{run_id}.err"
    out_fd = create_output(out)
    try:
        err_fd = create_output(err)
    except OSError:
        os.close(out_fd)
        raise
    return Outputs(run_id=run_id, out=out, err=err, fds=(out_fd, err_fd))


def started(folder: Path, outputs: Outputs, *, pid: int, message: dict[str, Any]) -> BackgroundRun:
    """Record the run just forked as ``pid`` (state ``running``)."""
    bg = message["bg"]
    record = RunRecord(
        id=outputs.run_id,
        session_id=bg.get("session_id"),
        pid=pid,
        cwd=str(bg["cwd"]),
        argv=tuple(message["argv"]),
        prompt=prompt_head(str(bg["prompt"])),
        started=time.time(),
        log=str(outputs.out),
        err_log=str(outputs.err),
    )
    _write(folder, record)
    return BackgroundRun(record=record)


def kill(run: BackgroundRun) -> None:
    """Send SIGTERM to the run's process group (its child made one with ``setsid``); SIGKILL
    follows after :data:`KILL_GRACE_S` (:func:`escalate`)."""
    run.killed = True
    if run.kill_at is None:
        run.kill_at = time.monotonic() + KILL_GRACE_S
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(run.record.pid, signal.SIGTERM)


def escalate(runs: dict[int, BackgroundRun]) -> None:
    """SIGKILL the process groups of killed runs still alive past their grace period."""
    now = time.monotonic()
    for run in runs.values():
        if run.kill_at is not None and now >= run.kill_at:
            run.kill_at = now + KILL_GRACE_S
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(run.record.pid, signal.SIGKILL)


def ended(folder: Path, run: BackgroundRun, exit_code: int) -> None:
    """Record that the run's process ended with ``exit_code``. For a killed run, what is left
    of its process group (a tool's subprocess) is ended too."""
    if run.killed:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(run.record.pid, signal.SIGKILL)
    _write(folder, finished(run.record, exit_code=exit_code, killed=run.killed, now=time.time()))
    # A run killed while it waited for the editor never removed its request.
    running = {r.id for r in map(effective, list_runs(folder)) if r.state == "running"}
    remove_approvals(folder, keep=running)


def _write(folder: Path, record: RunRecord) -> None:
    try:
        write_record(folder, record)
    except OSError as exc:
        log.warning("could not write the record of background run %s: %s", record.id, exc)
