"""Glob and Grep run ripgrep with one thread on folders an earlier search found small: the
bookkeeping, and that both paths give the same answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_agent.tools import _rg
from lsp_agent.tools import glob as glob_module
from lsp_agent.tools import grep as grep_module
from lsp_agent.tools._leaf import sentinel
from lsp_agent.tools._proc import Streamed
from lsp_agent.tools._rg import SMALL_CPU_MS, SmallRoots, looks_tiny
from lsp_agent.tools.glob import GlobTool
from lsp_agent.tools.grep import GrepTool

from .conftest import Env, record_rg_runs

ONE = ["--threads=1"]


def _ended(*, cpu_ms: float | None, stopped: Any = None) -> Streamed:
    return Streamed(stderr=b"", returncode=0, stopped=stopped, cpu_ms=cpu_ms)


def test_a_folder_is_small_after_a_cheap_search_and_so_are_folders_inside_it() -> None:
    small = SmallRoots()
    root = Path("/work/project")
    assert small.threads_args(root) == []
    small.note(root, _ended(cpu_ms=SMALL_CPU_MS))
    assert small.threads_args(root) == ONE
    assert small.threads_args(root / "src" / "app") == ONE
    assert small.threads_args(root.parent) == []
    assert small.threads_args(Path("/work/project-two")) == []


def test_a_costly_or_stopped_search_makes_a_folder_large_again() -> None:
    small = SmallRoots()
    root = Path("/p")
    small.note(root, _ended(cpu_ms=1.0))
    small.note(root, _ended(cpu_ms=SMALL_CPU_MS + 0.1))
    assert small.threads_args(root) == []
    small.note(root, _ended(cpu_ms=1.0))
    small.note(root, _ended(cpu_ms=None, stopped="timeout"))
    assert small.threads_args(root) == []
    # A large folder inside a small one is large; its CPU time unknown changes nothing.
    small.note(root, _ended(cpu_ms=1.0))
    small.note(root / "big", _ended(cpu_ms=500.0))
    small.note(root / "big", _ended(cpu_ms=None))
    assert small.threads_args(root / "big" / "x") == []
    assert small.threads_args(root / "other") == ONE


def test_the_filesystem_root_counts_as_an_ancestor() -> None:
    small = SmallRoots()
    small.note(Path("/"), _ended(cpu_ms=1.0))
    assert small.threads_args(Path("/a/b")) == ONE


def test_only_the_latest_64_folders_are_remembered() -> None:
    small = SmallRoots()
    for index in range(65):
        small.note(Path(f"/f{index}"), _ended(cpu_ms=1.0))
    assert small.threads_args(Path("/f0")) == []
    assert small.threads_args(Path("/f1")) == ONE
    assert small.threads_args(Path("/f64")) == ONE


@pytest.fixture
def project(env: Env) -> Env:
    for index in range(30):
        env.write_text(
            f"pkg/mod_{index:02d}.py",
            f"def f{index}():\n    return {index}  # marker\n" + "x = 1\n" * index,
        )
    env.write_text("README.md", "marker in prose\n")
    env.write_text(".ignore", "ignored.py\n")  # ripgrep honours it outside git too
    env.write_text("ignored.py", "marker\n")
    return env


needs_sentinel = pytest.mark.skipif(
    sentinel().group() is None, reason="CPU times come with the sentinel's runs (Linux 5.3+)"
)


@needs_sentinel
@pytest.mark.parametrize(
    "raw",
    [
        {"pattern": "marker"},
        {"pattern": "marker", "output_mode": "content", "-n": True},
        {"pattern": "marker", "output_mode": "count"},
        {"pattern": "return", "output_mode": "content", "-C": 1, "head_limit": 20},
    ],
    ids=["files", "content", "count", "context"],
)
async def test_grep_answers_the_same_with_one_thread(
    project: Env, monkeypatch: pytest.MonkeyPatch, raw: dict[str, Any]
) -> None:
    monkeypatch.setattr(_rg, "TINY_FILES", 0)  # only a measured search tells
    calls = record_rg_runs(monkeypatch, grep_module, "stream_rg")
    grep = GrepTool()
    first = await project.run(grep, raw)
    second = await project.run(grep, raw)
    inside = await project.run(grep, {**raw, "path": "pkg"})
    assert "--threads=1" not in calls[0]
    assert calls[1][0] == "--threads=1"
    assert calls[2][0] == "--threads=1"
    assert first.text == second.text
    assert first.raw_output == second.raw_output
    assert "ignored.py" not in first.text
    fresh = await project.run(GrepTool(), {**raw, "path": "pkg"})
    assert inside.text == fresh.text


@needs_sentinel
async def test_grep_of_one_file_never_asks_for_threads(
    project: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = record_rg_runs(monkeypatch, grep_module, "stream_rg")
    grep = GrepTool()
    for _ in range(2):
        out = await project.run(grep, {"pattern": "marker", "path": "pkg/mod_03.py"})
        assert out.text.endswith("mod_03.py")
    assert all("--threads=1" not in call for call in calls)


@needs_sentinel
@pytest.mark.parametrize("pattern", ["**/*.py", "pkg/mod_1*.py", "README.md"])
async def test_glob_answers_the_same_when_it_reads_in_the_event_loop(
    project: Env, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    monkeypatch.setattr(_rg, "TINY_FILES", 0)  # only a measured search tells
    threaded = record_rg_runs(monkeypatch, glob_module, "drain_rg")
    inline = record_rg_runs(monkeypatch, glob_module, "stream_rg")
    glob = GlobTool()
    first = await project.run(glob, {"pattern": pattern})
    second = await project.run(glob, {"pattern": pattern})
    assert len(threaded) == 1 and len(inline) == 1
    assert "--threads=1" in inline[0]
    assert first.text == second.text
    assert first.raw_output == second.raw_output
    assert first.text != "No files found"


def test_a_quick_look_tells_a_tiny_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for index in range(4):
        (tmp_path / "pkg" / f"sub{index}").mkdir(parents=True)
        (tmp_path / "pkg" / f"sub{index}" / "mod.py").write_text("x = 1\n")
    (tmp_path / ".git" / "objects").mkdir(parents=True)
    for index in range(10):
        (tmp_path / ".git" / "objects" / f"o{index}").write_bytes(b"z" * 1000)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    for index in range(10):
        (outside / f"f{index}").write_text("y\n")
    (tmp_path / "link").symlink_to(outside, target_is_directory=True)
    # Five files (the link counts as one: it is not followed), six folders with the root
    # (.git is not counted), 24 bytes in the four files and the link's own size.
    size = 24 + (tmp_path / "link").lstat().st_size
    monkeypatch.setattr(_rg, "TINY_FILES", 6)
    monkeypatch.setattr(_rg, "TINY_BYTES", size)
    assert looks_tiny(tmp_path)
    monkeypatch.setattr(_rg, "TINY_BYTES", size - 1)
    assert not looks_tiny(tmp_path)
    monkeypatch.setattr(_rg, "TINY_BYTES", size)
    monkeypatch.setattr(_rg, "TINY_FILES", 5)  # six folders are too many
    assert not looks_tiny(tmp_path)
    assert not looks_tiny(tmp_path / "missing")


@needs_sentinel
async def test_a_first_search_of_a_tiny_tree_uses_one_thread(
    project: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = record_rg_runs(monkeypatch, grep_module, "stream_rg")
    raw = {"pattern": "marker", "output_mode": "content"}
    quick = await project.run(GrepTool(), raw)
    monkeypatch.setattr(_rg, "TINY_FILES", 0)
    pooled = await project.run(GrepTool(), raw)
    assert calls[0][0] == "--threads=1"
    assert "--threads=1" not in calls[1]
    assert quick.text == pooled.text
    assert quick.text.count("marker") == 31
