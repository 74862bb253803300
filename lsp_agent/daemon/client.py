"""The client end: hand this invocation to a running daemon, or say why not.

Imports only the standard library (and the daemon's own small modules), so trying costs a
few milliseconds. Anything short of a daemon that accepted the run gives ``None`` and the
caller runs in-process: no socket (silently), a socket that is not private to this user, a
daemon that does not answer within :data:`ANSWER_TIMEOUT_S`, one that died (stale socket) or
runs another build (each with a one-line note on stderr).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from lsp_agent.daemon.paths import socket_path, socket_problem
from lsp_agent.daemon.wire import Reader, build_key, send

ANSWER_TIMEOUT_S = 1.0
"""How long a daemon may take to accept a run before the client runs in-process (seconds)."""

NO_DAEMON_ENV = "LSP_AGENT_NO_DAEMON"
"""Environment variable: set to 1 to never hand a run over to the daemon."""

EXIT_DAEMON_LOST = 1
"""Exit code when the daemon ended in the middle of a run it had accepted."""


def hand_over(
    argv: Sequence[str], *, environ: Mapping[str, str], cwd: str, err: TextIO | None = None
) -> int | None:
    """Run ``argv`` (the arguments after ``lsp-agent``) in the daemon with this process's
    stdin, stdout, stderr, ``environ`` and ``cwd``; returns its exit code, or ``None`` when
    the caller must run it itself (see the module doc). Signals SIGINT, SIGTERM and SIGHUP
    received meanwhile are passed on to the run."""
    err = err if err is not None else sys.stderr
    if environ.get(NO_DAEMON_ENV, "") not in ("", "0") or not supported():
        return None
    path = socket_path(environ)
    problem = socket_problem(path)
    if problem == "no daemon":
        return None
    if problem:
        return _fall_back(err, f"not using the daemon socket: {problem}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        return _run(sock, path, argv, environ=environ, cwd=cwd, err=err)
    finally:
        sock.close()


def _run(
    sock: socket.socket,
    path: Path,
    argv: Sequence[str],
    *,
    environ: Mapping[str, str],
    cwd: str,
    err: TextIO,
) -> int | None:
    sock.settimeout(ANSWER_TIMEOUT_S)
    try:
        sock.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        return _fall_back(err, f"the daemon is not running (stale socket {path})")
    except OSError as exc:
        return _fall_back(err, f"could not reach the daemon: {exc}")
    request = {
        "op": "run",
        "build": build_key(),
        "argv": list(argv),
        "cwd": cwd,
        "env": dict(environ),
    }
    reader = Reader(sock)
    try:
        send(sock, request)
        answer = reader.read()
        if answer is not None and answer.get("ok"):
            # Descriptors go only to a daemon that answered (see the server).
            send(sock, {"op": "fds"}, fds=[0, 1, 2])
            answer = reader.read()
    except TimeoutError:
        return _fall_back(err, f"the daemon did not answer within {ANSWER_TIMEOUT_S:g} s")
    except (OSError, ValueError) as exc:
        return _fall_back(err, f"the daemon failed: {exc}")
    if answer is None or not answer.get("ok"):
        reason = (answer or {}).get("error", "it closed the connection")
        if "another build" in reason:
            # An upgrade leaves the old daemon up until its idle timeout: every run would say
            # this line again, so it names the way out.
            reason += (
                " (`lsp-agent daemon stop` ends it once its runs end; "
                "`lsp-agent daemon start` starts a current one)"
            )
        return _fall_back(err, f"the daemon refused the run: {reason}")
    sock.settimeout(None)
    return _wait(sock, reader, err)


def _wait(sock: socket.socket, reader: Reader, err: TextIO) -> int:
    pending: list[int] = []

    def forward(number: int, _frame: Any) -> None:
        pending.append(number)
        # Interrupts the blocking read below (PEP 475 retries it after the handler).
        with contextlib.suppress(OSError):
            send(sock, {"op": "signal", "signal": number})

    previous = {
        sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    }
    try:
        while True:
            try:
                message = reader.read()
            except (OSError, ValueError):
                message = None
            if message is None:
                err.write("lsp-agent: the daemon ended during the run\n")
                return EXIT_DAEMON_LOST
            code = message.get("exit")
            if isinstance(code, int):
                return code
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _fall_back(err: TextIO, reason: str) -> int | None:
    """Say why the daemon is not used; ``None`` (run in-process)."""
    with contextlib.suppress(OSError, ValueError):
        err.write(f"lsp-agent: {reason}; running without it\n")
        err.flush()
    return None


def status(
    environ: Mapping[str, str], *, timeout_s: float = ANSWER_TIMEOUT_S
) -> dict[str, Any] | None:
    """The running daemon's status (``pid``, ``build``, ``running``, ``served``), or ``None``
    when none answers on a trusted socket."""
    return _request(environ, {"op": "status"}, timeout_s)


def stop(environ: Mapping[str, str], *, timeout_s: float = 5.0) -> bool:
    """Ask the daemon to stop (it lets running runs finish); ``True`` if one was asked and its
    socket went away within ``timeout_s`` seconds."""
    if _request(environ, {"op": "stop"}, ANSWER_TIMEOUT_S) is None:
        return False
    path = socket_path(environ)
    deadline = time.monotonic() + timeout_s
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not path.exists()


def _request(
    environ: Mapping[str, str], message: dict[str, Any], timeout_s: float
) -> dict[str, Any] | None:
    path = socket_path(environ)
    if socket_problem(path):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        sock.connect(str(path))
        send(sock, message)
        answer = Reader(sock).read()
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
    return answer if answer and answer.get("ok") else None


def daemon_log(environ: Mapping[str, str]) -> Path:
    """Where ``lsp-agent daemon start`` sends the daemon's own log."""
    return socket_path(environ).parent / "daemon.log"


def supported() -> bool:
    """Whether this platform can pass descriptors and check peers (Linux)."""
    return hasattr(socket, "SO_PEERCRED") and hasattr(socket, "send_fds") and os.name == "posix"


class BackgroundError(Exception):
    """The daemon could not take a background run; the message names the problem."""


def start_background(
    argv: Sequence[str],
    *,
    environ: Mapping[str, str],
    cwd: str,
    project: str,
    session_id: str | None,
    prompt: str,
    stdin_fd: int,
) -> dict[str, Any] | None:
    """Have the daemon start ``argv`` (the arguments after ``lsp-agent``, without ``--bg``) as
    a background run with ``environ``, ``cwd`` and ``stdin_fd`` as its stdin (``project``:
    the run's project directory, ``--cwd`` or ``cwd``, for the record); returns the
    daemon's answer (``id``, ``pid``, ``session_id``), or ``None`` when no daemon runs (no
    socket, or a stale one: the caller may start one and try again). Raises
    :class:`BackgroundError` for a socket that cannot be trusted, a daemon that does not
    answer within :data:`ANSWER_TIMEOUT_S`, runs another build or refuses the run — a
    background run never falls back to running here."""
    path = socket_path(environ)
    problem = socket_problem(path)
    if problem == "no daemon":
        return None
    if problem:
        raise BackgroundError(f"not using the daemon socket: {problem}")
    request = {
        "op": "run",
        "build": build_key(),
        "argv": list(argv),
        "cwd": cwd,
        "env": dict(environ),
        "bg": {"session_id": session_id, "prompt": prompt, "cwd": project},
    }
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(ANSWER_TIMEOUT_S)
    try:
        try:
            sock.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            return None
        reader = Reader(sock)
        send(sock, request)
        answer = reader.read()
        if answer is not None and answer.get("ok"):
            send(sock, {"op": "fds"}, fds=[stdin_fd])
            answer = reader.read()
    except TimeoutError:
        raise BackgroundError(f"the daemon did not answer within {ANSWER_TIMEOUT_S:g} s") from None
    except (OSError, ValueError) as exc:
        raise BackgroundError(f"the daemon failed: {exc}") from None
    finally:
        sock.close()
    if answer is None or not answer.get("ok") or not isinstance(answer.get("id"), str):
        reason = (answer or {}).get("error", "it closed the connection")
        raise BackgroundError(f"the daemon refused the run: {reason}")
    return answer


def kill_background(environ: Mapping[str, str], run_id: str) -> str | None:
    """Ask the daemon to end background run ``run_id``; ``None`` when it did, else why not
    (no daemon answers, or the run is not one of its running runs)."""
    path = socket_path(environ)
    problem = socket_problem(path)
    if problem:
        return problem
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(ANSWER_TIMEOUT_S)
    try:
        sock.connect(str(path))
        send(sock, {"op": "kill", "id": run_id})
        answer = Reader(sock).read()
    except (OSError, ValueError) as exc:
        return f"the daemon did not answer: {exc}"
    finally:
        sock.close()
    if answer is None:
        return "the daemon closed the connection"
    return None if answer.get("ok") else str(answer.get("error", "refused"))
