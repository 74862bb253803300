"""Background runs from the command line: ``run -p --bg`` hands the run to the daemon (starting
one if none runs) and returns at once; ``ps``, ``logs``, ``attach`` and ``kill`` read and manage
the registry (:mod:`lsp_agent.store.runs`). Also ``daemon start``.

Imported only by these commands: standard library and the daemon's client.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from lsp_agent.daemon import client
from lsp_agent.daemon.paths import ensure_private_dir, socket_path
from lsp_agent.headless.terminal import plain
from lsp_agent.store.private import runs_dir
from lsp_agent.store.runs import (
    RunLookupError,
    RunRecord,
    alive,
    effective,
    find_run,
    is_run_process,
    list_runs,
    prune,
    write_record,
)

DAEMON_START_TIMEOUT_S = 30.0
"""How long a starting daemon may take to answer (seconds; it imports the SDK first)."""

FOLLOW_POLL_S = 0.1
"""How often ``attach`` and ``logs -f`` look for new output (seconds)."""

LOST_GRACE_S = 2.0
"""How long a run whose process is gone may still read ``running`` before ``attach`` takes it
for ended without a report (seconds: the daemon writes the record just after reaping)."""

EXIT_DETACHED = 130
EXIT_FAILED = 1


def start_daemon(idle_timeout: int, *, environ: Mapping[str, str], quiet: bool = False) -> int:
    """``lsp-agent daemon start``: start the daemon unless one answers; 0 once it answers,
    1 (with the reason on stderr) when it cannot be started."""
    info = client.status(environ)
    if info is not None:
        if not quiet:
            print(f"lsp-agent daemon: already running (pid {info['pid']})")
        return 0
    path = socket_path(environ)
    try:
        ensure_private_dir(path.parent)
    except PermissionError as exc:
        print(f"lsp-agent: error: {exc}", file=sys.stderr)
        return 1
    log_path = client.daemon_log(environ)
    command = [sys.executable, "-m", "lsp_agent", "daemon", "serve"]
    with open(os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab") as log:
        subprocess.Popen(
            [*command, "--idle-timeout", str(idle_timeout)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd="/",
            env=dict(environ),
            start_new_session=True,
        )
    deadline = time.monotonic() + DAEMON_START_TIMEOUT_S
    while time.monotonic() < deadline:
        info = client.status(environ)
        if info is not None:
            if not quiet:
                print(f"lsp-agent daemon: started (pid {info['pid']}, socket {path})")
            return 0
        time.sleep(0.05)
    print(f"lsp-agent: error: the daemon did not start; see {log_path}", file=sys.stderr)
    return 1


def run_in_background(routed: list[str], args: argparse.Namespace) -> int:
    """``run -p --bg``: start the run in the daemon and print ``ID<TAB>SESSION`` (``-`` for a
    session known only once the run starts); 0 at once, 1 with the reason on stderr when no
    daemon can take it (never runs in the foreground instead), 2 for a run with no prompt."""
    from lsp_agent.headless.stdin import piped

    environ = os.environ
    if environ.get(client.NO_DAEMON_ENV, "") not in ("", "0"):
        return _fail(f"--bg needs the daemon, and {client.NO_DAEMON_ENV} is set")
    if not client.supported():
        return _fail("--bg needs the daemon, which needs Linux (Unix sockets, peer credentials)")
    stdin_piped = piped(sys.stdin)
    if args.input_format == "text" and args.prompt in (None, "-") and not stdin_piped:
        print(
            "lsp-agent run: error: --bg needs the prompt: give PROMPT or pipe it on stdin",
            file=sys.stderr,
        )
        return 2
    argv, session_id = _background_argv(routed, args)
    if args.prompt not in (None, "-"):
        prompt = str(args.prompt)
    else:
        prompt = "(stream-json on stdin)" if args.input_format != "text" else "(stdin)"
    with contextlib.ExitStack() as stack:
        if stdin_piped:
            stdin_fd = sys.stdin.fileno()
        else:
            stdin_fd = os.open(os.devnull, os.O_RDONLY)
            stack.callback(os.close, stdin_fd)
        try:
            answer = None
            for attempt in range(2):
                answer = client.start_background(
                    argv,
                    environ=environ,
                    cwd=os.getcwd(),
                    project=str(Path(args.cwd or ".").resolve()),
                    session_id=session_id,
                    prompt=prompt,
                    stdin_fd=stdin_fd,
                )
                if answer is not None or attempt:
                    break
                # Starting it takes seconds on a busy machine: say why nothing seems to happen.
                print("lsp-agent: starting the background daemon…", file=sys.stderr, flush=True)
                if start_daemon(1800, environ=environ, quiet=True) != 0:
                    return _fail("--bg: the daemon could not be started")
        except client.BackgroundError as exc:
            return _fail(_refusal(exc))
    if answer is None:
        return _fail("--bg: the daemon started but does not take runs")
    run_id, session = str(answer["id"]), answer.get("session_id") or "-"
    print(f"{run_id}\t{session}")
    print(
        f"lsp-agent: background run {run_id} started (session {session}); "
        f"follow it: lsp-agent attach {run_id}",
        file=sys.stderr,
    )
    return 0


def _refusal(exc: client.BackgroundError) -> str:
    """Why ``--bg`` failed, with what to do about a daemon of another build."""
    hint = ""
    if "another build" in str(exc):
        hint = (
            " (`lsp-agent daemon stop` ends it once its runs end; "
            "the next --bg starts a current one)"
        )
    return f"--bg: {exc}{hint}"


def _background_argv(routed: list[str], args: argparse.Namespace) -> tuple[list[str], str | None]:
    """The run's arguments without ``--bg``, with ``--session-id`` added when the run starts a
    new session without one; and the session id (``None``: continues the newest session)."""
    end = routed.index("--") if "--" in routed else len(routed)
    argv = [a for a in routed[:end] if a != "--bg"] + routed[end:]
    if args.session_id is not None:
        return argv, str(args.session_id)
    resuming = args.continue_session or args.resume is not None
    if resuming and not args.fork_session:
        return argv, args.resume or None
    session_id = str(uuid.uuid4())
    return [argv[0], "--session-id", session_id, *argv[1:]], session_id


def command(args: argparse.Namespace) -> int:
    """``ps``, ``logs``, ``attach`` or ``kill``; the exit code."""
    folder = runs_dir(os.environ)
    if args.command == "ps":
        return _ps(folder, as_json=args.json)
    try:
        record = find_run(folder, args.run_id)
    except RunLookupError as exc:
        return _fail(str(exc))
    if args.command == "kill":
        return _kill(folder, record)
    if args.command == "logs" and not args.follow:
        for path, stream in ((record.log, sys.stdout), (record.err_log, sys.stderr)):
            _copy_new(path, 0, stream.buffer)
        return 0
    # Ctrl-C detaches even when SIGINT arrived ignored: Python installs its handler only over
    # the default disposition, and a background job of a non-interactive shell (an agent's
    # shell, `make test &`) starts with SIGINT ignored, which left `attach` deaf to the
    # interrupt (`run -p` answers it in the same case: its event loop sets its own handler).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        final = _follow(folder, record)
    except KeyboardInterrupt:
        print(
            f"\nlsp-agent: detached from run {record.id}; it goes on "
            f"(lsp-agent attach {record.id})",
            file=sys.stderr,
        )
        return EXIT_DETACHED
    if args.command == "logs":
        return 0
    return final.exit_code if final.exit_code is not None else EXIT_FAILED


def _ps(folder: Path, *, as_json: bool) -> int:
    prune(folder)
    from lsp_agent.store.run_approvals import waiting_runs

    records = [effective(r) for r in list_runs(folder)]
    waiting = waiting_runs(folder, now=time.time())
    if as_json:
        rows_json = [r.to_json() | {"waiting_for_approval": r.id in waiting} for r in records]
        print(json.dumps(rows_json, indent=2))
        return 0
    if not records:
        print("no background runs (start one: lsp-agent run -p --bg PROMPT)")
        return 0
    rows = [("ID", "STATE", "EXIT", "STARTED", "SESSION", "DIRECTORY", "PROMPT")]
    for r in records:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.started))
        code = "-" if r.exit_code is None else str(r.exit_code)
        state = "waiting for approval" if r.state == "running" and r.id in waiting else r.state
        # A prompt or folder name may hold escape sequences; a cell is one line.
        cwd, prompt = plain(r.cwd, one_line=True), plain(r.prompt, one_line=True)
        rows.append((r.id, state, code, started, r.session_id or "-", cwd, prompt))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[-1]]).rstrip())
    return 0


def _kill(folder: Path, record: RunRecord) -> int:
    current = effective(record)
    if current.state != "running":
        code = "" if current.exit_code is None else f", exit {current.exit_code}"
        return _fail(f"background run {record.id} is not running ({current.state}{code})")
    problem = client.kill_background(os.environ, record.id)
    if problem is not None:
        # No daemon looks after the run any more (it died): end the run's group here.
        if not alive(record.pid):
            return _fail(f"background run {record.id} is not running ({problem})")
        if not is_run_process(record):
            # The pid was reused: ending that group would end someone else's program.
            return _fail(
                f"background run {record.id} ended unseen: process {record.pid} is another "
                "process now (or its start time cannot be read); nothing was killed"
            )
        _kill_group(record.pid)
        write_record(folder, replace(record, state="killed", ended=time.time()))
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        latest = _reread(folder, record)
        if latest.state != "running":
            print(f"lsp-agent: killed background run {record.id}")
            return 0
        time.sleep(FOLLOW_POLL_S)
    return _fail(f"background run {record.id} did not end")


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(FOLLOW_POLL_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _follow(folder: Path, record: RunRecord) -> RunRecord:
    """Copy the run's output as it grows until the run ended; the last record."""
    offsets = [0, 0]
    gone_since: float | None = None
    while True:
        latest = _reread(folder, record)
        for index, (path, stream) in enumerate(
            ((record.log, sys.stdout), (record.err_log, sys.stderr))
        ):
            offsets[index] = _copy_new(path, offsets[index], stream.buffer)
        if latest.state != "running":
            return latest
        if not alive(latest.pid):
            gone_since = gone_since or time.monotonic()
            if time.monotonic() - gone_since > LOST_GRACE_S:
                print(f"lsp-agent: background run {record.id} ended unseen", file=sys.stderr)
                return effective(latest)
        time.sleep(FOLLOW_POLL_S)


def _reread(folder: Path, record: RunRecord) -> RunRecord:
    from lsp_agent.store.runs import read_record

    return read_record(folder / f"{record.id}.json") or record


def _copy_new(path: str, offset: int, out: BinaryIO) -> int:
    """Write what ``path`` holds past ``offset`` to ``out``; the new offset."""
    if not path:
        return offset
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            while chunk := handle.read(65536):
                out.write(chunk)
                offset += len(chunk)
    except OSError:
        return offset
    out.flush()
    return offset


def _fail(message: str) -> int:
    print(f"lsp-agent: error: {message}", file=sys.stderr)
    return EXIT_FAILED
