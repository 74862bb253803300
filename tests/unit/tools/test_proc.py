"""Tool subprocesses run by ``run_streamed``: exit codes and signals kept, and the program
never outlives the server, with the supervisor and without it (the sentinel's group, or the
parent-death signal where the sentinel cannot run)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from lsp_agent.tools import _leaf
from lsp_agent.tools._leaf import SENTINEL_NAME, Sentinel, sentinel
from lsp_agent.tools._proc import pdeathsig_prefix, run_streamed
from tests.procs import live_pids

from .test_tool_bash import assert_all_gone


def _pids_with(marker: str) -> list[int]:
    """Live Python processes (not a supervisor shell) whose last argument is ``marker``."""
    tail = [marker.encode(), b""]
    return live_pids(lambda args: args[0] == sys.executable.encode() and args[-2:] == tail)


def _parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return int(stat[stat.rfind(b")") + 2 :].split()[1])


@pytest.mark.parametrize("starts_processes", [True, False], ids=["supervised", "leaf"])
async def test_exit_codes_and_signals_are_kept(tmp_path: Path, starts_processes: bool) -> None:
    lines: list[bytes] = []

    def keep(data: bytes) -> bool:
        lines.append(data)
        return True

    done = await run_streamed(
        ["sh", "-c", "echo one; echo two; exit 3"],
        cwd=tmp_path,
        timeout_s=60,
        on_lines=keep,
        starts_processes=starts_processes,
    )
    assert (done.returncode, done.stopped, b"\n".join(lines)) == (3, None, b"one\ntwo")
    killed = await run_streamed(
        ["sh", "-c", "kill -TERM $$"],
        cwd=tmp_path,
        timeout_s=60,
        on_lines=keep,
        starts_processes=starts_processes,
    )
    assert killed.returncode == -signal.SIGTERM


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("starts_processes", [True, False], ids=["supervised", "leaf"])
async def test_a_killed_server_takes_the_program_along(
    tmp_path: Path, starts_processes: bool
) -> None:
    marker = f"proc-marker-{uuid.uuid4().hex[:8]}"
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        from pathlib import Path
        from lsp_agent.tools._proc import run_streamed

        asyncio.run(run_streamed(
            [sys.executable, "-c", "import time; time.sleep(120)", {marker!r}],
            cwd=Path({str(tmp_path)!r}), timeout_s=120, on_lines=lambda _: True,
            starts_processes={starts_processes!r},
        ))
        """
    )
    server = subprocess.Popen([sys.executable, "-c", script], env=os.environ.copy())
    try:
        for _ in range(400):
            if _pids_with(marker):
                break
            await asyncio.sleep(0.025)
        (program,) = _pids_with(marker)
        # Without a supervisor the program is the server's own child, and (where pidfds
        # exist) in the group of the server's sentinel.
        guarded = sentinel().group() is not None or bool(pdeathsig_prefix())
        leaf = not starts_processes and guarded
        assert (_parent(program) == server.pid) == leaf
        if leaf and sentinel().group() is not None:
            leader = os.getpgid(program)
            assert _parent(leader) == server.pid
            assert SENTINEL_NAME.encode() in Path(f"/proc/{leader}/cmdline").read_bytes()
        server.send_signal(signal.SIGKILL)
        server.wait(60)
        await assert_all_gone([program])
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(60)


def _keep(into: list[bytes]) -> Callable[[bytes], bool]:
    def keep(data: bytes) -> bool:
        into.append(data)
        return True

    return keep


needs_sentinel = pytest.mark.skipif(
    sentinel().group() is None, reason="the sentinel needs /bin/sh and pidfds (Linux 5.3+)"
)


@needs_sentinel
async def test_a_leaf_runs_in_the_sentinels_group_and_reports_its_cpu_time(
    tmp_path: Path,
) -> None:
    lines: list[bytes] = []
    done = await run_streamed(
        [sys.executable, "-c", "import os; sum(range(3_000_000)); print(os.getpgid(0))"],
        cwd=tmp_path,
        timeout_s=60,
        on_lines=_keep(lines),
        starts_processes=False,
    )
    assert done.returncode == 0
    assert lines == [str(sentinel().group()).encode()]
    assert done.cpu_ms is not None and done.cpu_ms > 10


@needs_sentinel
async def test_a_leaf_stopped_early_is_killed(tmp_path: Path) -> None:
    seen: list[bytes] = []

    def first_only(data: bytes) -> bool:
        seen.append(data)
        return False

    done = await run_streamed(
        ["yes"], cwd=tmp_path, timeout_s=60, on_lines=first_only, starts_processes=False
    )
    assert done.stopped == "limit"
    assert done.returncode == -signal.SIGKILL
    assert len(seen) == 1


@needs_sentinel
async def test_a_cancelled_leaf_is_killed(tmp_path: Path) -> None:
    marker = f"proc-marker-{uuid.uuid4().hex[:8]}"
    task = asyncio.ensure_future(
        run_streamed(
            [sys.executable, "-c", "import time; time.sleep(120)", marker],
            cwd=tmp_path,
            timeout_s=120,
            on_lines=lambda _: True,
            starts_processes=False,
        )
    )
    for _ in range(400):
        if _pids_with(marker):
            break
        await asyncio.sleep(0.025)
    (program,) = _pids_with(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await assert_all_gone([program])


@needs_sentinel
async def test_a_killed_sentinel_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = Sentinel()
    monkeypatch.setattr(_leaf, "sentinel", lambda: own)
    try:
        first = own.group()
        assert first is not None
        os.kill(first, signal.SIGKILL)
        await assert_all_gone([first])
        lines: list[bytes] = []
        done = await run_streamed(
            [sys.executable, "-c", "import os; print(os.getpgid(0))"],
            cwd=tmp_path,
            timeout_s=60,
            on_lines=_keep(lines),
            starts_processes=False,
        )
        second = own.group()
        assert second is not None and second != first
        assert lines == [str(second).encode()]
        assert done.cpu_ms is not None
    finally:
        own.close()


async def test_without_the_sentinel_a_leaf_runs_the_general_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_leaf, "_SH", str(tmp_path / "no-shell"))
    own = Sentinel()
    monkeypatch.setattr(_leaf, "sentinel", lambda: own)
    lines: list[bytes] = []
    done = await run_streamed(
        ["sh", "-c", "echo one; exit 3"],
        cwd=tmp_path,
        timeout_s=60,
        on_lines=_keep(lines),
        starts_processes=False,
    )
    assert own.group() is None
    assert (done.returncode, lines, done.cpu_ms) == (3, [b"one"], None)


@needs_sentinel
def test_a_forked_child_starts_its_own_sentinel() -> None:
    parents = sentinel().group()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its sentinel's group and that sentinel's parent
        try:
            own = sentinel().group()
            os.write(write_end, f"{own} {_parent(own) if own else 0} {os.getpid()}".encode())
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        report = os.read(read_end, 200).decode().split()
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    own, own_parent, child = (int(part) for part in report)
    assert own != parents
    assert own_parent == child
    assert sentinel().group() == parents
