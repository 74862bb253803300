"""Subprocesses for tools: own process group, closed stdin, bounded time, killed on cancel.

Every child starts a new session (``start_new_session=True``), so it leads its own process
group and the whole tree it spawns (``cmd &``, pipelines) can be signalled at once with
``os.killpg``. Nothing here goes through a shell unless the caller runs one explicitly.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 65536
_POLL_S = 0.05


async def start(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None
) -> asyncio.subprocess.Process:
    """Start ``argv`` (no shell) in a new process group with stdin at ``/dev/null`` and
    stdout and stderr as two pipes. Raises ``OSError`` (``FileNotFoundError`` for a missing
    program or ``cwd``)."""
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )


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
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
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
class Captured:
    """What a captured run produced. ``stdout`` holds at most the requested byte count;
    ``truncated`` says the process was stopped because it wrote more. ``returncode`` is
    negative for a signal (as in :mod:`subprocess`)."""

    stdout: bytes
    stderr: bytes
    returncode: int
    truncated: bool


async def run_captured(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout_s: float,
    max_stdout_bytes: int,
    max_stderr_bytes: int = 16384,
) -> Captured:
    """Run ``argv`` to completion and collect its output.

    The process group is killed when stdout passes ``max_stdout_bytes`` (the result is then
    ``truncated``), when ``timeout_s`` seconds pass (``TimeoutError`` is raised) and when the
    calling task is cancelled (``CancelledError`` propagates). Raises ``OSError`` if the
    program cannot start.
    """
    proc = await start(argv, cwd=cwd)
    assert proc.stdout is not None and proc.stderr is not None
    stdout, stderr = proc.stdout, proc.stderr

    async def read_stdout() -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        while chunk := await stdout.read(_CHUNK):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_stdout_bytes:
                kill_group_now(proc)
                return b"".join(chunks)[:max_stdout_bytes], True
        return b"".join(chunks), False

    async def read_stderr() -> bytes:
        kept = bytearray()
        while chunk := await stderr.read(_CHUNK):
            # Keep draining past the limit so a chatty child never blocks on a full pipe.
            kept += chunk[: max(0, max_stderr_bytes - len(kept))]
        return bytes(kept)

    try:
        async with asyncio.timeout(timeout_s):
            (out, truncated), err = await asyncio.gather(read_stdout(), read_stderr())
            returncode = await proc.wait()
    except BaseException:
        kill_group_now(proc)
        raise
    return Captured(stdout=out, stderr=err, returncode=returncode, truncated=truncated)
