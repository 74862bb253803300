"""Modification times read on worker threads: same answers, same order, bounded memory."""

from __future__ import annotations

import asyncio
import os
import random
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

from lsp_agent.tools import _mtimes
from lsp_agent.tools._mtimes import NO_MTIME, ParallelMtimes, stat_mtimes
from lsp_agent.tools._newest import NewestMatches
from lsp_agent.tools._rg import find_rg
from lsp_agent.tools.base import ReadState, ToolContext
from lsp_agent.tools.glob import GlobTool
from lsp_agent.tools.grep import GrepTool
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.workspace import Workspace

FILES = 3000  # well past INLINE_PATHS, so the threads do the work


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[bytes]]:
    """3,000 files in 30 folders, every one with its own modification time, shuffled so
    that neither name nor creation order gives the time order."""
    root = tmp_path_factory.mktemp("mtimes")
    paths: list[bytes] = []
    times = list(range(FILES))
    random.Random(7).shuffle(times)
    for i, age in enumerate(times):
        folder = root / f"pkg{i % 30:02d}"
        folder.mkdir(exist_ok=True)
        path = folder / f"mod{i:05d}.py"
        path.write_text("def main():\n    pass\n")
        stamp = 1_700_000_000 + age
        os.utime(path, (stamp, stamp))
        paths.append(os.fsencode(path))
    return root, paths


def test_stat_mtimes_marks_what_cannot_be_read(tmp_path: Path) -> None:
    here = tmp_path / "a.txt"
    here.write_text("x")
    os.utime(here, ns=(5_000_000_000, 5_000_000_000))
    assert stat_mtimes([os.fsencode(here), os.fsencode(tmp_path / "gone")]) == [
        5_000_000_000,
        NO_MTIME,
    ]


async def test_threads_give_the_same_times_in_submission_order(
    tree: tuple[Path, list[bytes]],
) -> None:
    _, paths = tree
    reader = ParallelMtimes(workers=3)
    got: list[tuple[bytes, int]] = []
    rng = random.Random(3)
    at = 0
    try:
        while at < len(paths):
            size = rng.randint(1, 700)
            reader.submit(paths[at : at + size])
            at += size
            for batch, mtimes in reader.ready():
                got.extend(zip(batch, mtimes, strict=True))
        for batch, mtimes in await reader.drain():
            got.extend(zip(batch, mtimes, strict=True))
    finally:
        reader.close()
    assert [path for path, _ in got] == paths
    assert [mtime for _, mtime in got] == stat_mtimes(paths)


async def test_outstanding_work_stays_bounded(
    tree: tuple[Path, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, paths = tree
    monkeypatch.setattr(_mtimes, "CHUNK_PATHS", 50)
    monkeypatch.setattr(_mtimes, "MAX_PENDING_PATHS", 200)
    reader = ParallelMtimes(workers=2)
    most = 0
    collected = 0
    try:
        for start in range(0, len(paths), 100):
            reader.submit(paths[start : start + 100])
            most = max(most, reader._pending_paths)
        collected = sum(len(batch) for batch, _ in reader.ready())
        collected += sum(len(batch) for batch, _ in await reader.drain())
    finally:
        reader.close()
    assert most <= 200
    assert collected == len(paths)


async def test_close_drops_work_not_started(tree: tuple[Path, list[bytes]]) -> None:
    _, paths = tree
    reader = ParallelMtimes(workers=1)
    reader.submit(paths)
    reader.close()
    reader.close()
    assert reader.ready() == []
    assert await reader.drain() == []
    assert await _stat_threads_gone()


@pytest.mark.parametrize("matcher", [None, re.compile(r"pkg0\d/.*")])
def test_newest_matches_ranks_like_a_full_sort(
    tree: tuple[Path, list[bytes]], matcher: re.Pattern[str] | None
) -> None:
    root, paths = tree
    prefix = str(root) + "/"
    newest = NewestMatches(prefix=prefix, matcher=matcher, keep=100)
    for start in range(0, len(paths), 257):
        newest.feed(b"\n".join(paths[start : start + 257]))
    wanted = [
        p
        for p in paths
        if matcher is None or matcher.fullmatch(os.fsdecode(p).removeprefix(prefix))
    ]
    expected = sorted(wanted, key=lambda p: (-os.stat(p).st_mtime_ns, p))[:100]
    assert newest.result() == [os.fsdecode(p) for p in expected]
    assert newest.total == len(wanted)


def test_draining_a_pipe_cut_anywhere_gives_the_same_answer(
    tree: tuple[Path, list[bytes]],
) -> None:
    """Reads end mid-line and mid-path; the last line has no newline."""
    root, paths = tree
    listing = b"\n".join(paths)
    newest = NewestMatches(prefix=str(root) + "/", matcher=None, keep=100)
    read_fd, write_fd = os.pipe()

    def write() -> None:
        rng = random.Random(5)
        at = 0
        with os.fdopen(write_fd, "wb", buffering=0) as out:
            while at < len(listing):
                size = rng.randint(1, 300)
                out.write(listing[at : at + size])
                at += size

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert newest.drain(read_fd) is True
    finally:
        writer.join()
        os.close(read_fd)
    expected = sorted(paths, key=lambda p: (-os.stat(p).st_mtime_ns, p))[:100]
    assert newest.result() == [os.fsdecode(p) for p in expected]
    assert newest.total == newest.listed == len(paths)


def test_a_stopped_drain_returns_before_reading_on(tmp_path: Path) -> None:
    newest = NewestMatches(prefix=str(tmp_path) + "/", matcher=None, keep=100)
    newest.stop()
    newest.stop()
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, b"/nowhere/a\n")
        assert newest.drain(read_fd) is False
    finally:
        os.close(read_fd)
        os.close(write_fd)
    assert newest.listed == 0


def _context(root: Path) -> ToolContext:
    return ToolContext(
        session_id="t",
        cwd=root,
        roots=(root,),
        workspace=Workspace(host=DiskHost(), roots=(root,)),
        read_state=ReadState(),
        progress=lambda _message: None,
    )


async def test_glob_and_grep_files_answer_as_ripgreps_own_sort(
    tree: tuple[Path, list[bytes]],
) -> None:
    root, _ = tree
    ctx = _context(root)
    sorted_files = subprocess.run(
        [find_rg(), "--files", "--sortr=modified", str(root)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    glob = GlobTool()
    inp = glob.parse({"pattern": "**/*.py"})
    out = await glob.call(inp, await glob.prepare(inp, ctx), ctx)
    assert out.text.splitlines()[:100] == sorted_files[:100]

    grep = GrepTool()
    ginp = grep.parse({"pattern": "def main"})
    gout = await grep.call(ginp, await grep.prepare(ginp, ctx), ctx)
    head, *shown, note = gout.text.splitlines()
    assert head == f"Found {FILES} files"
    assert note.startswith("(output cut at")  # the answer shows the newest few hundred
    assert len(shown) > 300
    assert shown == sorted_files[: len(shown)]


async def _stat_threads_gone() -> bool:
    for _ in range(500):
        if not _stat_threads():
            return True
        await asyncio.sleep(0.01)
    return False


def _stat_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("lsp-agent-stat")]


async def test_a_cancelled_search_leaves_no_stat_threads(
    tree: tuple[Path, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = tree
    real = _mtimes.stat_mtimes

    def slow(paths: list[bytes]) -> list[int]:
        time.sleep(0.05)
        return real(paths)

    monkeypatch.setattr(_mtimes, "stat_mtimes", slow)
    ctx = _context(root)
    grep = GrepTool()
    inp = grep.parse({"pattern": "def main"})
    task = asyncio.ensure_future(grep.call(inp, await grep.prepare(inp, ctx), ctx))
    for _ in range(1000):
        if _stat_threads() or task.done():
            break
        await asyncio.sleep(0.005)
    assert _stat_threads(), "the search never handed work to a stat thread"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _stat_threads_gone()


async def test_a_cancelled_glob_leaves_no_stat_thread(
    tree: tuple[Path, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = tree
    real = NewestMatches.feed
    fed = threading.Event()

    def slow(self: NewestMatches, data: bytes) -> bool:
        fed.set()
        time.sleep(0.05)
        return real(self, data)

    monkeypatch.setattr(NewestMatches, "feed", slow)
    ctx = _context(root)
    glob = GlobTool()
    inp = glob.parse({"pattern": "**/*.py"})
    task = asyncio.ensure_future(glob.call(inp, await glob.prepare(inp, ctx), ctx))
    for _ in range(1000):
        if fed.is_set() or task.done():
            break
        await asyncio.sleep(0.005)
    assert fed.is_set(), "the listing never reached the stat thread"
    assert _stat_threads()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _stat_threads_gone()
