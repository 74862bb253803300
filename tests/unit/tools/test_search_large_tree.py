"""Glob on a tree of more than 250,000 files (empty hard links, made once per run).

Glob used to read at most 16 MiB of ripgrep's newest-first listing; on this tree (≈ 20 MB of
paths) the oldest files fell after that cut, and a pattern that only they match answered
"No files found". These tests hold the answers complete at that scale.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.tools.base import ReadState, ToolContext
from lsp_agent.tools.glob import MAX_RESULTS, GlobTool
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.workspace import Workspace

DIRS, PER_DIR = 520, 500
FILES = DIRS * PER_DIR
# At most this many links per inode on ext4; other file systems allow more.
_LINKS_PER_SEED = 60_000


def _scratch_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A memory file system makes the 260,000 directory entries several times faster to
    # create and remove than a disk.
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return tmp_path_factory.getbasetemp()


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="lsp-agent-bigtree-", dir=_scratch_base(tmp_path_factory)))
    root = root.resolve()
    try:
        seed = root / "seed"
        made = 0
        for d in range(DIRS):
            folder = root / f"d{d:03}_{'x' * 40}"
            folder.mkdir()
            for f in range(PER_DIR):
                if made % _LINKS_PER_SEED == 0:
                    seed = root / f".seed{made}"
                    seed.touch()
                    os.utime(seed, (2_000_000, 2_000_000))
                os.link(seed, folder / f"file_{f:03}.txt")
                made += 1
        # The oldest files: last in a newest-first listing.
        for i, name in enumerate(["target_a.py", "target_b.py", "target_c.py"]):
            target = root / f"d{i:03}_{'x' * 40}" / name
            target.write_text("needle\n")
            os.utime(target, (1_000_000 + i, 1_000_000 + i))
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def context(root: Path) -> ToolContext:
    host = DiskHost()
    return ToolContext(
        session_id="big",
        cwd=root,
        roots=(root,),
        workspace=Workspace(host=host, roots=(root,)),
        read_state=ReadState(),
        progress=lambda _message: None,
    )


async def run(tool: GlobTool, raw: dict[str, object], root: Path) -> str:
    ctx = context(root)
    inp = tool.parse(raw)
    prepared = await tool.prepare(inp, ctx)
    return (await tool.call(inp, prepared, ctx)).text


async def test_glob_finds_the_oldest_files_past_the_old_listing_cap(big_tree: Path) -> None:
    listing_bytes = FILES * len(f"{big_tree}/d000_{'x' * 40}/file_000.txt\n")
    assert listing_bytes > 16 * 1024 * 1024
    text = await run(GlobTool(), {"pattern": "**/target_*.py"}, big_tree)
    assert text.split("\n") == [
        str(big_tree / f"d{i:03}_{'x' * 40}" / f"target_{c}.py")
        for i, c in ((2, "c"), (1, "b"), (0, "a"))
    ]


async def test_glob_over_every_file_says_how_many_matched(big_tree: Path) -> None:
    text = await run(GlobTool(), {"pattern": "**/*.txt"}, big_tree)
    lines = text.split("\n")
    assert len(lines) == MAX_RESULTS + 1
    assert lines[-1].startswith(
        f"(Results are truncated: showing the {MAX_RESULTS} most recently modified of {FILES} "
    )
