"""Tool subprocesses run by ``run_streamed``: exit codes and signals kept, and the program
never outlives the server, with the supervisor and without it (the parent-death signal)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

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
        # Without a supervisor the program is the server's own child.
        leaf = not starts_processes and bool(pdeathsig_prefix())
        assert (_parent(program) == server.pid) == leaf
        server.send_signal(signal.SIGKILL)
        server.wait(60)
        await assert_all_gone([program])
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(60)
