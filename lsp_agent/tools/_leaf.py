"""Starting a program that starts no processes of its own (ripgrep, for Glob and Grep) at the
cost of one ``exec``, watched without a thread, and kept from outliving the server.

**The sentinel.** One small shell per server process, started on first use, leads a process
group of its own (in the server's session) and blocks reading a pipe whose only writer is the
server (the same lifeline as the supervisor's, see :mod:`lsp_agent.tools._proc`). Each such
program joins the sentinel's group when it starts (``setpgid`` in the child, before its
``exec``). When the server ends in any way — even SIGKILL — the kernel closes the pipe's write
end, the sentinel reads end-of-file and kills its whole group: every program started this way
that still runs. Unlike ``setpriv --pdeathsig`` there is no extra ``exec`` per run and no window
after the ``fork`` in which the program is unguarded: it is in the group before it runs.

**No thread per child.** asyncio's default child watcher starts a thread for every process it
waits for. Here the exit is watched through a pidfd (Linux 5.3 and later) registered with the
event loop; the program is reaped with ``wait4``, which also reports its CPU time (the search
tools use it to tell small trees, see :class:`lsp_agent.tools._rg.SmallRoots`), and it is
signalled through the pidfd, so a signal never reaches a process that merely reuses the pid.

Where the sentinel cannot run (no ``/bin/sh``) or pidfds are not available, :func:`start_leaf`
returns ``None`` and the caller keeps the general path (``setpriv``, else the supervisor).
If something kills the sentinel, the next start notices (it reaps it) and starts a new one;
programs started before that run on unguarded until they finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path

_SH = "/bin/sh"

SENTINEL_SCRIPT = "read -r _; kill -KILL 0"
"""The sentinel (POSIX sh), with the lifeline's read end as stdin: it waits for end-of-file
(nothing is ever written) and then kills its process group."""

SENTINEL_NAME = "lsp-agent-sentinel"
"""The sentinel's ``$0`` (how it shows in a process list)."""

_CHUNK = 65536


class Sentinel:
    """The process-wide sentinel (see the module docstring); get it with :func:`sentinel`.
    Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._lifeline = -1
        self._unusable = False

    def group(self) -> int | None:
        """The process group id a program joins to be guarded, starting the sentinel when
        none runs; ``None`` where it cannot run (then it is not tried again)."""
        with self._lock:
            if self._proc is not None and self._proc.poll() is not None:
                self._close_lifeline()
                self._proc = None
            if self._proc is None and not self._unusable:
                self._proc = self._start()
                self._unusable = self._proc is None
            return self._proc.pid if self._proc is not None else None

    def close(self) -> None:
        """Close the lifeline, so the sentinel kills its group (programs started through it
        that still run) and ends, and wait for it. A later :meth:`group` starts a new one."""
        with self._lock:
            self._close_lifeline()
            if self._proc is not None:
                self._proc.wait()
            self._proc = None

    def forget_inherited(self) -> None:
        """In a child made by ``fork``: drop the parent's sentinel (not this process's
        child) and close the inherited lifeline, so the parent's sentinel still sees the
        parent's end; this process starts its own on first use."""
        self._lock = threading.Lock()  # another thread may have held it at the fork
        self._close_lifeline()
        if self._proc is not None:
            self._proc.returncode = 0  # never to be waited for here
        self._proc = None

    def _start(self) -> subprocess.Popen[bytes] | None:
        if not sys.platform.startswith("linux") or not hasattr(signal, "pidfd_send_signal"):
            return None
        if not os.access(_SH, os.X_OK):
            return None
        read_end, lifeline = os.pipe()
        try:
            proc = subprocess.Popen(
                [_SH, "-c", SENTINEL_SCRIPT, SENTINEL_NAME],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                process_group=0,
            )
        except OSError:
            os.close(lifeline)
            return None
        finally:
            os.close(read_end)
        try:
            # The kernel must offer pidfds (5.3+) for the programs this sentinel guards.
            os.close(os.pidfd_open(proc.pid))
        except OSError:
            os.close(lifeline)  # the sentinel reads end-of-file and ends
            proc.wait()
            return None
        self._lifeline = lifeline
        return proc

    def _close_lifeline(self) -> None:
        if self._lifeline >= 0:
            os.close(self._lifeline)
            self._lifeline = -1


@cache
def sentinel() -> Sentinel:
    """This process's :class:`Sentinel` (one per process: it guards every session's searches;
    a child made by ``fork`` gets its own)."""
    made = Sentinel()
    os.register_at_fork(after_in_child=made.forget_inherited)
    return made


class LeafProcess:
    """A program started by :func:`start_leaf`. ``exited`` gets its return code (negative for
    a signal) once it has been reaped; ``cpu_ms`` is then its user + system CPU time (ms).
    The reaping happens in the event loop whether or not anyone awaits ``exited``."""

    def __init__(
        self, *, popen: subprocess.Popen[bytes], pidfd: int, loop: asyncio.AbstractEventLoop
    ) -> None:
        self.pid = popen.pid
        self.cpu_ms: float | None = None
        self.exited: asyncio.Future[int] = loop.create_future()
        self._popen = popen
        self._pidfd = pidfd
        self._loop = loop
        loop.add_reader(pidfd, self._reap)

    def kill(self) -> None:
        """SIGKILL the program unless it was reaped already (never another process)."""
        if self._pidfd >= 0:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def _reap(self) -> None:
        self._loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = -1
        try:
            _pid, status, usage = os.wait4(self.pid, 0)
            returncode = os.waitstatus_to_exitcode(status)
            self.cpu_ms = (usage.ru_utime + usage.ru_stime) * 1000
        except ChildProcessError:
            returncode = 255  # reaped by someone else (asyncio's convention)
        self._popen.returncode = returncode
        if not self.exited.done():
            self.exited.set_result(returncode)


def start_leaf(argv: Sequence[str], *, cwd: Path, stdout: int, stderr: int) -> LeafProcess | None:
    """Start ``argv`` (a program that starts no processes of its own) with stdin at
    ``/dev/null`` and the given stdout and stderr descriptors, in the sentinel's process group
    (see the module docstring); ``None`` where that is not possible (the caller then starts
    it another way). Raises ``OSError`` if the program cannot start. Call from the event
    loop's thread."""
    group = sentinel().group()
    if group is None:
        return None
    loop = asyncio.get_running_loop()
    try:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            process_group=group,
        )
    except PermissionError as exc:
        if exc.errno != errno.EPERM:
            raise
        # The group ended between the check and the start (the sentinel was killed).
        return None
    try:
        pidfd = os.pidfd_open(popen.pid)
    except OSError:
        popen.kill()
        popen.wait()
        raise
    return LeafProcess(popen=popen, pidfd=pidfd, loop=loop)


def read_kept(fd: int, max_bytes: int) -> asyncio.Future[bytes]:
    """Read the pipe ``fd`` to its end in the event loop and close it; the future gets the
    first ``max_bytes`` bytes. Reading goes on if the future is cancelled (so the writer is
    never blocked), and the descriptor is closed at end-of-file."""
    loop = asyncio.get_running_loop()
    kept = bytearray()
    done: asyncio.Future[bytes] = loop.create_future()
    os.set_blocking(fd, False)

    def readable() -> None:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            kept.extend(chunk[: max(0, max_bytes - len(kept))])
            return
        loop.remove_reader(fd)
        os.close(fd)
        if not done.done():
            done.set_result(bytes(kept))

    loop.add_reader(fd, readable)
    return done
