"""The daemon: accepts invocations on its socket and runs each in a forked child.

One thread, a selector loop: the process must be single-threaded whenever it forks. A child
is a copy of the warm process (agent, SDK and dependencies imported by ``preload``) that takes
over the client's invocation (:func:`_become`) and runs the normal command-line entry point;
the daemon reports the child's exit code to the client, forwards the client's signals, and
ends the child's process group when the client goes away. A background run (``run -p --bg``,
:mod:`lsp_agent.daemon.background`) writes to files instead and outlives its client; ``kill``
ends one. The daemon exits after ``idle_timeout_s`` seconds without a client or a running
child, and on ``stop`` once its runs have ended.

Why a fork per run rather than sessions built inside the daemon: a run's working directory,
environment, locale, standard streams, signal dispositions and resource limits are
process-wide, and settings, hooks, MCP servers and the permission engine all read them. A
child that becomes the client's process (:func:`_become`) and then goes through the same entry
point, argument parsing and composition root as an in-process ``run -p`` gives an identical
result by construction, isolates one run's faults and leaks from the next, and lets ``kill``
end a run with its process group. The warm part the fork shares is what costs time: the
imported modules.
"""

from __future__ import annotations

import contextlib
import io
import locale
import logging
import os
import selectors
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.daemon import background, warm
from lsp_agent.daemon.background import BackgroundRun
from lsp_agent.daemon.paths import ensure_private_dir, peer_uid
from lsp_agent.daemon.wire import Reader, build_key, send
from lsp_agent.store.runs import RUN_ENV

log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT_S = 2.0
"""How long a connecting client may take to send its first message (seconds)."""

_TICK_S = 0.2
_FORWARDED_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


@dataclass(frozen=True, kw_only=True)
class DaemonConfig:
    """What the daemon runs. ``main`` is the command-line entry point (argv without the
    program name → exit code) that must not hand over to a daemon itself; ``preload`` imports
    what a run needs, before the first fork; ``runs_dir`` is the registry folder of background
    runs."""

    socket_path: Path
    runs_dir: Path
    idle_timeout_s: float
    main: Callable[[list[str]], int]
    preload: Callable[[], None]


@dataclass(kw_only=True)
class _Run:
    conn: socket.socket
    reader: Reader
    pid: int


@dataclass(kw_only=True)
class _State:
    runs: dict[int, _Run] = field(default_factory=dict)
    background: dict[int, BackgroundRun] = field(default_factory=dict)
    served: int = 0
    last_activity: float = field(default_factory=time.monotonic)
    stopping: bool = False


class DaemonRunningError(Exception):
    """Another daemon already answers on the socket."""


def serve(config: DaemonConfig) -> int:
    """Run the daemon in this process until it is stopped or idle; returns 0.

    Raises :class:`DaemonRunningError` when a daemon already answers on the socket, and
    ``PermissionError`` when the socket's directory is not private to this user.
    """
    path = config.socket_path
    ensure_private_dir(path.parent)
    ensure_private_dir(config.runs_dir)
    listener = _bind(path)
    try:
        config.preload()
        warm.freeze()
        key = build_key()
        state = _State()
        selector = selectors.DefaultSelector()
        selector.register(listener, selectors.EVENT_READ, None)
        with contextlib.suppress(ValueError):
            signal.signal(signal.SIGTERM, lambda *_: _raise_exit())
        log.info("daemon listening on %s (pid %d)", path, os.getpid())
        while not (state.stopping and not state.runs and not state.background):
            for sel_key, _ in selector.select(_TICK_S):
                if sel_key.fileobj is listener:
                    _accept(listener, selector, state, config, key)
                else:
                    _client_event(sel_key.data, selector)
            _reap(state, selector, config.runs_dir)
            background.escalate(state.background)
            idle = time.monotonic() - state.last_activity
            if not state.runs and not state.background and idle > config.idle_timeout_s:
                log.info("idle for %.0f s: exiting", idle)
                break
    except SystemExit:
        pass
    finally:
        _unbind(listener, path)
    return 0


def _raise_exit() -> None:
    raise SystemExit(0)


def _bind(path: Path) -> socket.socket:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a stale socket from a daemon that died
    else:
        raise DaemonRunningError(f"a daemon already answers on {path}")
    finally:
        probe.close()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    listener.listen(16)
    listener.setblocking(False)
    return listener


def _unbind(listener: socket.socket, path: Path) -> None:
    listener.close()
    with contextlib.suppress(OSError):
        path.unlink()


def _accept(
    listener: socket.socket,
    selector: selectors.BaseSelector,
    state: _State,
    config: DaemonConfig,
    key: str,
) -> None:
    try:
        conn, _ = listener.accept()
    except BlockingIOError:
        return
    state.last_activity = time.monotonic()
    uid = peer_uid(conn)
    if uid != os.getuid():
        log.warning("refused a connection from uid %s", uid)
        conn.close()
        return
    conn.settimeout(HANDSHAKE_TIMEOUT_S)  # bounds the replies sent during the handshake too
    handshake_deadline = time.monotonic() + HANDSHAKE_TIMEOUT_S
    reader = Reader(conn)
    try:
        message = reader.read(deadline=handshake_deadline)
    except (OSError, ValueError) as exc:
        log.warning("bad first message: %s", exc)
        _close_all(conn, reader.fds)
        return
    op = (message or {}).get("op")
    if op == "status":
        _reply(
            conn,
            {
                "ok": True,
                "pid": os.getpid(),
                "build": key,
                "running": len(state.runs) + len(state.background),
                "background": len(state.background),
                "served": state.served,
                "stopping": state.stopping,
            },
        )
        _close_all(conn, reader.fds)
    elif op == "stop":
        state.stopping = True
        _reply(conn, {"ok": True, "pid": os.getpid(), "background": len(state.background)})
        _close_all(conn, reader.fds)
    elif op == "kill" and message is not None:
        _kill(conn, message, state)
        _close_all(conn, reader.fds)
    elif op == "run" and message is not None:
        _start_run(
            _Start(conn=conn, reader=reader, message=message, listener=listener),
            selector=selector,
            state=state,
            config=config,
            key=key,
        )
    else:
        _reply(conn, {"error": f"unknown request {op!r}"})
        _close_all(conn, reader.fds)


@dataclass(frozen=True, kw_only=True)
class _Start:
    """A run request being served: its connection, reader, message and the listener (which
    the child closes)."""

    conn: socket.socket
    reader: Reader
    message: dict[str, Any]
    listener: socket.socket


def _start_run(
    start: _Start,
    *,
    selector: selectors.BaseSelector,
    state: _State,
    config: DaemonConfig,
    key: str,
) -> None:
    conn, reader, message, listener = start.conn, start.reader, start.message, start.listener
    # A stopping daemon still answers status and kill (for the runs it waits for), not runs.
    problem = "the daemon is stopping" if state.stopping else _run_problem(message, key)
    if problem:
        _reply(conn, {"error": problem})
        _close_all(conn, reader.fds)
        return
    # Only now the client sends its descriptors: a daemon that never answered must not
    # hold the client's stdout open (its reader would wait for an end that never comes).
    _reply(conn, {"ok": True, "send": "fds"})
    try:
        follow = reader.read(deadline=time.monotonic() + HANDSHAKE_TIMEOUT_S)
    except (OSError, ValueError):
        follow = None
    if "bg" in message:
        _start_background(start, follow=follow, state=state, config=config)
        return
    if (follow or {}).get("op") != "fds" or len(reader.fds) != 3:
        _reply(conn, {"error": "expected the client's stdin, stdout and stderr"})
        _close_all(conn, reader.fds)
        return
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns (covered end to end)
        _become(config, message, reader.fds, [listener, conn])
    for fd in reader.fds:
        os.close(fd)
    reader.fds.clear()
    state.served += 1
    run = _Run(conn=conn, reader=reader, pid=pid)
    state.runs[pid] = run
    _reply(conn, {"ok": True, "pid": pid})
    conn.settimeout(None)
    selector.register(conn, selectors.EVENT_READ, run)


def _start_background(
    start: _Start,
    *,
    follow: dict[str, Any] | None,
    state: _State,
    config: DaemonConfig,
) -> None:
    """Start a background run: the client sent only its stdin; stdout and stderr go to the
    run's files. Answers ``{"ok", "id", "pid", "session_id"}`` and closes the connection."""
    conn, reader, message = start.conn, start.reader, start.message
    if (follow or {}).get("op") != "fds" or len(reader.fds) != 1:
        _reply(conn, {"error": "expected the client's stdin"})
        _close_all(conn, reader.fds)
        return
    try:
        outputs = background.open_outputs(config.runs_dir)
    except OSError as exc:
        _reply(conn, {"error": f"could not create the run's output files: {exc}"})
        _close_all(conn, reader.fds)
        return
    fds = [reader.fds[0], *outputs.fds]
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns (covered end to end)
        # The run learns its id, under which it asks the editor about tool calls.
        message["env"] = {**message["env"], RUN_ENV: outputs.run_id}
        _become(config, message, fds, [start.listener, conn])
    outputs.close()
    for fd in reader.fds:
        os.close(fd)
    reader.fds.clear()
    run = background.started(config.runs_dir, outputs, pid=pid, message=message)
    state.background[pid] = run
    state.served += 1
    _reply(
        conn,
        {"ok": True, "id": run.record.id, "pid": pid, "session_id": run.record.session_id},
    )
    conn.close()


def _kill(conn: socket.socket, message: dict[str, Any], state: _State) -> None:
    run_id = message.get("id")
    for run in state.background.values():
        if run.record.id == run_id:
            background.kill(run)
            _reply(conn, {"ok": True, "pid": run.record.pid})
            return
    _reply(conn, {"error": f"background run {run_id!r} is not running in this daemon"})


def _run_problem(message: dict[str, Any], key: str) -> str | None:
    if message.get("build") != key:
        return f"the daemon runs another build of lsp-agent ({key}, client {message.get('build')})"
    argv, cwd, env = message.get("argv"), message.get("cwd"), message.get("env")
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
        return "argv must be a list of strings"
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        return "cwd must be an absolute path"
    if not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
        return "env must map names to strings"
    if "bg" in message:
        return background.request_problem(message)
    return None


def _reply(conn: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        send(conn, message)


def _close_all(conn: socket.socket, fds: Sequence[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    conn.close()


def _client_event(run: _Run, selector: selectors.BaseSelector) -> None:
    # One receive per readiness event, never a blocking read: a client that sends part of a
    # line must not stall the loop every other client and run depends on.
    messages: list[dict[str, Any]] = []
    try:
        alive = run.reader.receive()
        while (message := run.reader.next_message()) is not None:
            messages.append(message)
    except (OSError, ValueError):
        alive = False
    for message in messages:
        number = message.get("signal")
        if (
            message.get("op") == "signal"
            and isinstance(number, int)
            and number in _FORWARDED_SIGNALS
        ):
            with contextlib.suppress(ProcessLookupError):
                os.kill(run.pid, number)
    if not alive:
        # The client went away (killed, or its terminal closed): end what it started.
        selector.unregister(run.conn)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGTERM)


def _exited() -> tuple[int, int] | None:
    """A child that ended, as ``(pid, exit code)``, left unreaped (a zombie); ``None`` when
    none has. A child killed by a signal gets the shell's code, 128 + the signal's number.
    Raises ``ChildProcessError`` when there is no child at all."""
    info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    if info is None or info.si_pid == 0:
        return None
    code = info.si_status if info.si_code == os.CLD_EXITED else 128 + info.si_status
    return info.si_pid, code


def _reap(state: _State, selector: selectors.BaseSelector, runs_dir: Path) -> None:
    while state.runs or state.background:
        try:
            ended = _exited()
        except ChildProcessError:
            return
        if ended is None:
            return
        pid, code = ended
        try:
            state.last_activity = time.monotonic()
            bg_run = state.background.pop(pid, None)
            if bg_run is not None:
                background.ended(runs_dir, bg_run, code)
                continue
            run = state.runs.pop(pid, None)
            if run is None:
                continue
            _reply(run.conn, {"exit": code})
            with contextlib.suppress(KeyError, ValueError):
                selector.unregister(run.conn)
            run.conn.close()
        finally:
            # Reaped only once its end is recorded: until then the pid stays (a zombie), so
            # `ps` reads the run as running, never as a run whose process vanished unseen
            # (which `runs.effective` reports as failed).
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _become(
    config: DaemonConfig, message: dict[str, Any], fds: Sequence[int], sockets: list[socket.socket]
) -> None:
    """In the forked child: take over the client's invocation and run it; never returns."""
    code = 1
    try:
        os.setsid()
        for sock in sockets:
            sock.close()
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(message["cwd"])
        os.environ.clear()
        os.environ.update(message["env"])
        warm.adopt_environment()
        with contextlib.suppress(locale.Error):
            locale.setlocale(locale.LC_CTYPE, "")
        _reopen_std_streams()
        argv: list[str] = message["argv"]
        sys.argv = ["lsp-agent", *argv]
        code = config.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        logging.shutdown()
        os._exit(code)


def _reopen_std_streams() -> None:
    """New ``sys.stdin/stdout/stderr`` over descriptors 0-2 as Python would set them up for a
    process started with this environment (encoding, buffering of a terminal or a pipe)."""
    env = os.environ
    encoding, _, errors = env.get("PYTHONIOENCODING", "").partition(":")
    if not encoding:
        encoding = "utf-8" if env.get("PYTHONUTF8") == "1" else locale.getpreferredencoding(False)
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))

    def wrap(fd: int, mode: str, stream_errors: str) -> io.TextIOWrapper:
        raw = io.FileIO(fd, mode, closefd=False)
        buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        return io.TextIOWrapper(
            buffered,
            encoding=encoding,
            errors=errors or stream_errors,
            line_buffering=mode == "w" and raw.isatty(),
            write_through=mode == "w" and unbuffered,
        )

    sys.stdin = wrap(0, "r", "strict")
    sys.stdout = wrap(1, "w", "strict")
    sys.stderr = wrap(2, "w", "backslashreplace")
