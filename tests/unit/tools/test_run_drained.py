"""A program's output read on a thread of its own: end of file, limits, time-outs, errors."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from lsp_agent.tools._proc import run_drained

THREAD = "test-drain"


def _threads_gone() -> bool:
    for _ in range(500):
        if not any(t.name == THREAD for t in threading.enumerate()):
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("starts_processes", [True, False], ids=["supervised", "leaf"])
async def test_the_whole_output_reaches_the_thread(tmp_path: Path, starts_processes: bool) -> None:
    got: list[bytes] = []
    readers: list[str] = []

    def drain(fd: int) -> bool:
        readers.append(threading.current_thread().name)
        while chunk := os.read(fd, 65536):
            got.append(chunk)
        return True

    script = "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done; echo oops >&2; exit 3"
    result = await run_drained(
        ["sh", "-c", script],
        cwd=tmp_path,
        timeout_s=30,
        drain=drain,
        thread_name=THREAD,
        starts_processes=starts_processes,
    )
    assert b"".join(got).split() == [f"line{i}".encode() for i in range(2000)]
    assert readers == [THREAD]
    assert result.returncode == 3
    assert result.stderr == b"oops\n"
    assert result.stopped is None
    assert _threads_gone()


@pytest.mark.parametrize("starts_processes", [True, False], ids=["supervised", "leaf"])
async def test_a_run_past_its_time_is_killed_and_keeps_what_was_read(
    tmp_path: Path, starts_processes: bool
) -> None:
    got: list[bytes] = []

    def drain(fd: int) -> bool:
        while chunk := os.read(fd, 65536):
            got.append(chunk)
        return True

    started = time.monotonic()
    result = await run_drained(
        # exec: a leaf program starts no processes of its own.
        ["sh", "-c", "echo early; exec sleep 30"],
        cwd=tmp_path,
        timeout_s=0.5,
        drain=drain,
        thread_name=THREAD,
        starts_processes=starts_processes,
    )
    assert time.monotonic() - started < 20
    assert result.stopped == "timeout"
    assert b"".join(got) == b"early\n"
    assert _threads_gone()


@pytest.mark.parametrize("starts_processes", [True, False], ids=["supervised", "leaf"])
async def test_a_drain_that_stops_early_ends_the_program(
    tmp_path: Path, starts_processes: bool
) -> None:
    yes = shutil.which("yes")
    assert yes is not None

    def drain(fd: int) -> bool:
        return not os.read(fd, 4096)

    result = await run_drained(
        [yes],
        cwd=tmp_path,
        timeout_s=30,
        drain=drain,
        thread_name=THREAD,
        starts_processes=starts_processes,
    )
    assert result.stopped == "limit"
    assert result.returncode != 0
    assert _threads_gone()


@pytest.mark.parametrize("starts_processes", [True, False], ids=["supervised", "leaf"])
async def test_an_error_in_the_drain_reaches_the_caller(
    tmp_path: Path, starts_processes: bool
) -> None:
    def drain(fd: int) -> bool:
        os.read(fd, 1)
        raise ValueError("bad listing")

    with pytest.raises(ValueError, match="bad listing"):
        await run_drained(
            ["sh", "-c", "echo x; exec sleep 30"],
            cwd=tmp_path,
            timeout_s=30,
            drain=drain,
            thread_name=THREAD,
            starts_processes=starts_processes,
        )
    assert _threads_gone()
