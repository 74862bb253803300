"""Subprocesses for tools: own process group, closed stdin, bounded time, killed on cancel,
and never outliving the server.

Every child starts a new session (``start_new_session=True``), so it leads its own process
group and the whole tree it spawns (``cmd &``, pipelines) can be signalled at once with
``os.killpg``.

Where ``/bin/sh`` exists the program runs under a small supervisor (:data:`SUPERVISOR`): a shell
that leads the group, runs the program in the background and waits for it, while a watcher in
the same group blocks reading a pipe whose only writer is this server. When the server ends in
any way — ``exit``, SIGTERM, SIGHUP, even SIGKILL — the kernel closes the write end, the watcher
reads end-of-file and kills the whole group. (``PR_SET_PDEATHSIG`` would reach only the direct
child, not the commands it started.) Exit codes are kept: the supervisor exits with the
program's status and dies of the same signal when the program did.

A program that starts no processes of its own (ripgrep, for Glob and Grep) needs no
supervisor. On Linux it joins the process group of this server's one sentinel (see
:mod:`lsp_agent.tools._leaf`), which kills the group when the server ends: one ``exec`` per
run, and its exit watched through a pidfd rather than a thread. Where the sentinel cannot
run, util-linux's ``setpriv --pdeathsig KILL`` sets the parent-death signal and then executes
the program in the same process, so the kernel kills it when the thread that started it (the
event loop's) ends. (That signal is set a moment after the ``fork``: a server killed within
that moment leaves the program to finish its run.) Where ``setpriv`` is missing or cannot set
the signal, the supervisor is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from lsp_agent.tools._leaf import read_kept, start_leaf

_CHUNK = 65536
# Large reads keep the per-batch Python work (split, decode) small relative to the data.
_STREAM_CHUNK = 1 << 20
# Streamed output: the pipe's capacity and the pause between reads (see _read_batched). At
# 1 MiB per 20 ms the writer can produce 50 MB/s before the reader stops pausing.
_PIPE_BYTES = 1 << 20
_DEFAULT_PIPE_BYTES = 65536
_BATCH_S = 0.02
_POLL_S = 0.05


SUPERVISOR = (
    "exec 3<&0 </dev/null; "
    "{ read -r _ <&3; kill -KILL 0; } & watcher=$!; "
    '"$@" 3<&- & child=$!; '
    'wait "$child"; status=$?; '
    'kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null; '
    'if [ "$status" -gt 128 ] && [ "$status" -lt 160 ]; then '
    'trap - HUP INT TERM; kill -s "$((status - 128))" $$; fi; '
    'exit "$status"'
)
"""The supervisor script (POSIX sh): ``sh -c SUPERVISOR lsp-agent-supervisor PROGRAM ARGS...``
with the lifeline pipe's read end as stdin. The program gets ``/dev/null`` as stdin; like any
background job of a non-interactive shell it ignores SIGINT and SIGQUIT (tools send SIGTERM and
SIGKILL)."""

_SH = "/bin/sh"


@cache
def pdeathsig_prefix() -> tuple[str, ...]:
    """The command prefix that makes a program die with this server's starting thread:
    ``(setpriv, "--pdeathsig", "KILL", "--")`` on Linux when util-linux's ``setpriv`` is on
    ``PATH`` and can set the signal (checked once per process by running ``true`` under it,
    ≈ 2 ms), else ``()``."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    if setpriv is None:
        return ()
    prefix = (setpriv, "--pdeathsig", "KILL", "--")
    try:
        probe = subprocess.run(
            [*prefix, "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    return prefix if probe.returncode == 0 else ()


async def _spawn(
    argv: Sequence[str], *, starts_processes: bool = True, **kwargs: Any
) -> asyncio.subprocess.Process:
    """``create_subprocess_exec`` in a new session, made to die with the server: under the
    supervisor when ``/bin/sh`` exists (stdin is then the lifeline), or, for a program that
    starts no processes of its own (``starts_processes=False``), with the parent-death
    signal where it can be set (stdin is then ``/dev/null``). See the module docstring."""
    program = argv[0]
    search = (kwargs.get("env") or os.environ).get("PATH")
    if not (
        os.access(program, os.X_OK) if os.sep in program else shutil.which(program, path=search)
    ):
        # Under the supervisor a missing program would only exit 127: keep the early error.
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    prefix = () if starts_processes else pdeathsig_prefix()
    if prefix:
        return await asyncio.create_subprocess_exec(
            *prefix, *argv, stdin=asyncio.subprocess.DEVNULL, start_new_session=True, **kwargs
        )
    if not os.access(_SH, os.X_OK):
        return await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, start_new_session=True, **kwargs
        )
    read_end, lifeline = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            _SH,
            "-c",
            SUPERVISOR,
            "lsp-agent-supervisor",
            *argv,
            stdin=read_end,
            start_new_session=True,
            **kwargs,
        )
    except BaseException:
        os.close(lifeline)
        raise
    finally:
        os.close(read_end)
    # The write end stays open while the program runs; the kernel closes it if we die.
    waiter = asyncio.ensure_future(proc.wait())
    waiter.add_done_callback(lambda _done: os.close(lifeline))
    return proc


@dataclass(frozen=True, kw_only=True)
class MergedOutputProcess:
    """A process whose stdout and stderr go to one pipe that the caller owns.

    The pipe is not registered with the process transport, so ``proc.wait()`` returns when
    the process exits even if a background child still holds the pipe open (asyncio's own
    pipes make ``wait()`` wait for them to close). Close ``transport`` when done.
    """

    proc: asyncio.subprocess.Process
    output: asyncio.StreamReader
    transport: asyncio.ReadTransport


async def start_merged(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None
) -> MergedOutputProcess:
    """Start ``argv`` (no shell) in a new process group, stdin at ``/dev/null``, stdout and
    stderr merged into one pipe. Raises ``OSError`` if it cannot start."""
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    try:
        try:
            proc = await _spawn(
                argv,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                stdout=write_fd,
                stderr=write_fd,
            )
        finally:
            os.close(write_fd)
    except BaseException:
        os.close(read_fd)
        raise
    reader = asyncio.StreamReader(loop=loop)
    transport, _protocol = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
        os.fdopen(read_fd, "rb", buffering=0),
    )
    return MergedOutputProcess(proc=proc, output=reader, transport=transport)


def signal_group(proc: asyncio.subprocess.Process, sig: int) -> bool:
    """Send ``sig`` to ``proc``'s process group; ``False`` if the group no longer exists.

    The group id is the leader's pid (``start_new_session``), and it stays valid while any
    member lives, even after the leader exited: that is how stragglers are found. Signal ``0``
    only tests whether the group exists.
    """
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def group_alive(proc: asyncio.subprocess.Process) -> bool:
    """Whether any process of ``proc``'s group still runs.

    Zombies do not count: an orphan whose adoptive parent never reaps it (some container
    init processes) stays a group member forever but runs nothing. They are told apart
    through ``/proc`` where it exists; elsewhere any member counts.
    """
    if not signal_group(proc, 0):
        return False
    if not os.path.exists("/proc/self/stat"):
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # Fields after the parenthesised command name: state, ppid, pgrp, ...
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == proc.pid and fields[0] not in (b"Z", b"X"):
            return True
    return False


async def stop_group(proc: asyncio.subprocess.Process, *, grace_s: float) -> None:
    """End every process in ``proc``'s group: SIGTERM, up to ``grace_s`` seconds for them to
    exit, then SIGKILL for whatever is left. Does not wait for the pipes to close."""
    if signal_group(proc, signal.SIGTERM):
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace_s
        # Polling: the kernel offers no event for "other processes of this group exited".
        while loop.time() < deadline and group_alive(proc):  # noqa: ASYNC110
            await asyncio.sleep(_POLL_S)
    signal_group(proc, signal.SIGKILL)


def kill_group_now(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL ``proc``'s group without waiting (for cancellation paths, which must not await)."""
    signal_group(proc, signal.SIGKILL)


@dataclass(frozen=True, kw_only=True)
class Streamed:
    """How a streamed run ended. ``stopped`` says why it was ended early: ``"limit"`` (the
    consumer asked to stop, e.g. too much output) or ``"timeout"``; ``None`` when the process
    ran to completion. ``returncode`` is negative for a signal. ``cpu_ms`` is the program's
    user + system CPU time (ms) where it is known (a program started through the sentinel,
    see :mod:`lsp_agent.tools._leaf`), else ``None``."""

    stderr: bytes
    returncode: int
    stopped: Literal["limit", "timeout"] | None
    cpu_ms: float | None = None


async def run_streamed(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout_s: float,
    on_lines: Callable[[bytes], bool],
    max_stderr_bytes: int = 16384,
    starts_processes: bool = True,
) -> Streamed:
    """Run ``argv`` and hand its stdout to ``on_lines`` in runs of complete lines (joined by
    ``\\n``, without the last one; a final line without a newline is handed over at the end),
    so the caller holds only what it keeps.

    ``on_lines`` returns ``False`` to stop: the process group is killed and the result says
    ``"limit"``. After ``timeout_s`` seconds the group is killed and the result says
    ``"timeout"`` (lines handed over so far stay valid). ``CancelledError`` kills it and
    propagates. Raises ``OSError`` if the program cannot start. ``starts_processes=False``
    (a program that never starts processes of its own, such as ripgrep) lets it run without
    the supervisor, guarded by the sentinel or the parent-death signal (see the module
    docstring); only the program itself is then killed, and the result carries its CPU time
    when the sentinel guarded it.

    Output is read in batches (see :func:`_read_batched`), so a program that writes many
    small pieces (ripgrep writes each file's results at once) costs a few wake-ups per
    :data:`_BATCH_S`, not one per write.
    """
    child, read_fd = await _spawn_piped(
        argv, cwd=cwd, starts_processes=starts_processes, max_stderr_bytes=max_stderr_bytes
    )
    exited = child.exited

    async def read_stdout() -> bool:
        rest = b""
        async with contextlib.aclosing(_read_batched(read_fd, exited)) as chunks:
            async for chunk in chunks:
                data = rest + chunk
                cut = data.rfind(b"\n")
                if cut < 0:
                    rest = data
                    continue
                rest = data[cut + 1 :]
                if not on_lines(data[:cut]):
                    child.kill()
                    return False
        return not rest or on_lines(rest)

    stopped: Literal["limit", "timeout"] | None = None
    try:
        try:
            async with asyncio.timeout(timeout_s):
                if not await read_stdout():
                    stopped = "limit"
                returncode = await asyncio.shield(exited)
        except TimeoutError:
            stopped = "timeout"
            child.kill()
            returncode = await asyncio.shield(exited)
        err = await child.stderr
    except BaseException:
        child.kill()
        child.stderr.cancel()
        exited.cancel()
        raise
    finally:
        os.close(read_fd)
    return Streamed(stderr=err, returncode=returncode, stopped=stopped, cpu_ms=child.cpu_ms())


@dataclass(frozen=True, kw_only=True)
class _Child:
    """A started program as :func:`run_streamed` and :func:`run_drained` use it. ``exited``
    (its return code) and ``stderr`` (the first bytes it wrote there) complete by themselves;
    await ``exited`` through ``asyncio.shield`` (a cancelled wait must not cancel it).
    ``kill`` SIGKILLs it (its whole group where it leads one); ``cpu_ms`` gives its CPU time
    once it exited, where known."""

    exited: asyncio.Future[int]
    stderr: asyncio.Future[bytes]
    kill: Callable[[], None]
    cpu_ms: Callable[[], float | None]


async def _spawn_piped(
    argv: Sequence[str], *, cwd: Path, starts_processes: bool, max_stderr_bytes: int
) -> tuple[_Child, int]:
    """Start ``argv`` with its stdout on a grown pipe and its stderr kept up to
    ``max_stderr_bytes``: a program that starts no processes through the sentinel (see
    :mod:`lsp_agent.tools._leaf`) where it runs, else as :func:`_spawn` does. Returns the
    child and the stdout pipe's read end, which the caller closes. Raises ``OSError`` if the
    program cannot start (no descriptor is left open then)."""
    read_fd, write_fd = os.pipe()
    try:
        try:
            _grow_pipe(write_fd)
            child = None if starts_processes else _start_leaf(argv, cwd, write_fd, max_stderr_bytes)
            if child is None:
                proc = await _spawn(
                    argv,
                    starts_processes=starts_processes,
                    cwd=cwd,
                    env=None,
                    stdout=write_fd,
                    stderr=asyncio.subprocess.PIPE,
                )
                assert proc.stderr is not None
                child = _Child(
                    exited=asyncio.ensure_future(proc.wait()),
                    stderr=asyncio.ensure_future(_read_kept(proc.stderr, max_stderr_bytes)),
                    kill=lambda: kill_group_now(proc),
                    cpu_ms=lambda: None,
                )
        finally:
            os.close(write_fd)
    except BaseException:
        os.close(read_fd)
        raise
    return child, read_fd


def _start_leaf(
    argv: Sequence[str], cwd: Path, stdout: int, max_stderr_bytes: int
) -> _Child | None:
    """:func:`lsp_agent.tools._leaf.start_leaf` with stderr on a pipe read in the event loop;
    ``None`` where the sentinel cannot guard it."""
    err_read, err_write = os.pipe()
    try:
        leaf = start_leaf(argv, cwd=cwd, stdout=stdout, stderr=err_write)
    except BaseException:
        os.close(err_read)
        raise
    finally:
        os.close(err_write)
    if leaf is None:
        os.close(err_read)
        return None
    return _Child(
        exited=leaf.exited,
        stderr=read_kept(err_read, max_stderr_bytes),
        kill=leaf.kill,
        cpu_ms=lambda: leaf.cpu_ms,
    )


async def _read_kept(stream: asyncio.StreamReader, max_bytes: int) -> bytes:
    """Read ``stream`` to its end, keeping the first ``max_bytes`` bytes."""
    kept = bytearray()
    while chunk := await stream.read(_CHUNK):
        kept += chunk[: max(0, max_bytes - len(kept))]
    return bytes(kept)


def _grow_pipe(fd: int) -> None:
    """Make the pipe behind ``fd`` hold :data:`_PIPE_BYTES` where the system allows (Linux's
    ``F_SETPIPE_SZ``; the unprivileged limit is ``/proc/sys/fs/pipe-max-size``, 1 MiB by
    default), so the writer rarely waits while the reader sleeps between batches."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, set_size, _PIPE_BYTES)


async def _read_batched(fd: int, exited: asyncio.Future[Any]) -> AsyncGenerator[bytes, None]:
    """The data read from the pipe ``fd`` until end of file, in chunks of at most
    :data:`_STREAM_CHUNK` bytes.

    asyncio's own pipe reader wakes the task for every write the other side makes (and
    each wake-up costs far more than reading the data). Here, after a chunk that did not
    fill half the pipe, the reader waits :data:`_BATCH_S` — or until ``exited`` (the
    writer's exit) is done — so that the writer's next pieces arrive together. A full pipe
    is read again at once, so the writer is not held up.
    """
    loop = asyncio.get_running_loop()
    os.set_blocking(fd, False)
    get_size = getattr(fcntl, "F_GETPIPE_SZ", None)
    try:
        capacity = fcntl.fcntl(fd, get_size) if get_size is not None else _DEFAULT_PIPE_BYTES
    except OSError:
        capacity = _DEFAULT_PIPE_BYTES
    # One buffer for every read: a fresh 1 MiB bytes object per read costs a mapping.
    buffer = bytearray(_STREAM_CHUNK)
    view = memoryview(buffer)
    while True:
        try:
            size = os.readv(fd, [buffer])
        except BlockingIOError:
            await _readable(loop, fd)
            continue
        if not size:
            return
        yield bytes(view[:size])
        if size < capacity // 2 and not exited.done():
            await asyncio.wait((exited,), timeout=_BATCH_S)


async def _readable(loop: asyncio.AbstractEventLoop, fd: int) -> None:
    """Wait until ``fd`` can be read (data or end of file)."""
    ready = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


async def run_drained(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout_s: float,
    drain: Callable[[int], bool],
    thread_name: str,
    max_stderr_bytes: int = 16384,
    starts_processes: bool = True,
) -> Streamed:
    """Run ``argv`` with its stdout going to a pipe that ``drain`` reads on its own thread
    (named ``thread_name``), with blocking reads, until end of file.

    For output that costs more to consume than to produce (Glob stats every path it is
    given): the event loop takes no part in reading, so the consumer keeps one core busy
    while the program runs on the others, and a full pipe holds the program back, bounding
    memory. ``drain(fd)`` returns ``False`` when it stopped reading early: the process group
    is then killed and the result says ``"limit"``. It must not close ``fd``.

    After ``timeout_s`` seconds the group is killed and the result says ``"timeout"``
    (what ``drain`` collected stays valid once it has returned). ``CancelledError`` kills
    the group and propagates at once; the thread then reads end of file and ends by itself
    (it closes the pipe). Raises ``OSError`` if the program cannot start; an exception
    raised by ``drain`` propagates. ``starts_processes`` as for :func:`run_streamed`.
    """
    child, read_fd = await _spawn_piped(
        argv, cwd=cwd, starts_processes=starts_processes, max_stderr_bytes=max_stderr_bytes
    )
    try:
        drained = _drain_on_thread(read_fd, drain, thread_name)
    except BaseException:
        os.close(read_fd)
        child.kill()
        raise
    exited = child.exited
    stopped: Literal["limit", "timeout"] | None = None
    try:
        try:
            async with asyncio.timeout(timeout_s):
                if not await asyncio.shield(drained):
                    stopped = "limit"
                    child.kill()
                returncode = await asyncio.shield(exited)
        except TimeoutError:
            stopped = "timeout"
            child.kill()
            returncode = await asyncio.shield(exited)
            await drained
        err = await child.stderr
    except asyncio.CancelledError:
        child.kill()
        child.stderr.cancel()
        exited.cancel()
        raise
    except BaseException:
        # The drain failed: the killed program is reaped before the error goes on.
        child.kill()
        await asyncio.wait((exited, child.stderr))
        raise
    return Streamed(stderr=err, returncode=returncode, stopped=stopped, cpu_ms=child.cpu_ms())


def _drain_on_thread(
    fd: int, drain: Callable[[int], bool], thread_name: str
) -> asyncio.Future[bool]:
    """Start ``drain(fd)`` on a new daemon thread, which closes ``fd`` when it returns; the
    future gets its result or exception. Raises ``RuntimeError`` if the thread cannot start
    (``fd`` is then still open)."""
    loop = asyncio.get_running_loop()
    drained: asyncio.Future[bool] = loop.create_future()
    # A cancelled caller no longer waits for it: an error it ends with is not news.
    drained.add_done_callback(lambda done: done.cancelled() or done.exception())

    def settle(outcome: bool | BaseException) -> None:
        if drained.done():
            return
        if isinstance(outcome, BaseException):
            drained.set_exception(outcome)
        else:
            drained.set_result(outcome)

    def work() -> None:
        outcome: bool | BaseException
        try:
            outcome = drain(fd)
        except BaseException as exc:  # handed to the awaiting task
            outcome = exc
        finally:
            os.close(fd)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=work, name=thread_name, daemon=True).start()
    return drained
