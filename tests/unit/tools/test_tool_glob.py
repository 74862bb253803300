"""Glob: ripgrep file listing, newest first, .gitignore respected."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.tools.base import ToolError
from lsp_agent.tools.glob import MAX_RESULTS, GlobTool, listing_threads_args

from .conftest import Env

GLOB = GlobTool()


def touch(path: Path, mtime: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    os.utime(path, (mtime, mtime))
    return path


async def test_matches_sorted_newest_first_absolute(env: Env) -> None:
    old = touch(env.path("src/old.py"), 1_000_000)
    new = touch(env.path("src/deep/new.py"), 3_000_000)
    mid = touch(env.path("mid.py"), 2_000_000)
    touch(env.path("notes.txt"), 4_000_000)
    out = await env.run(GLOB, {"pattern": "**/*.py"})
    assert out.text.split("\n") == [str(new), str(mid), str(old)]
    assert out.raw_output == {"count": 3, "total": 3, "truncated": False}
    # The user sees them as the tool titles name files: relative to the session's folder.
    (shown,) = out.content
    assert shown.type == "content"
    assert shown.content.text.split("\n") == ["src/deep/new.py", "mid.py", "src/old.py"]


async def test_matches_outside_the_session_folder_are_shown_absolute(env: Env) -> None:
    inside = touch(env.path("pkg/a.py"), 1)
    outside = touch(env.root.parent / f"{env.root.name}-outside" / "a.py", 1)
    # A sibling whose name starts with the session folder's name is outside it too.
    sibling = touch(env.root.parent / f"{env.root.name}x" / "a.py", 1)
    for path, shown_as in ((inside, "pkg/a.py"), (outside, str(outside)), (sibling, str(sibling))):
        out = await env.run(GLOB, {"pattern": "*.py", "path": str(path.parent)})
        assert out.text == str(path)
        (shown,) = out.content
        assert shown.type == "content"
        assert shown.content.text == shown_as


async def test_name_pattern_matches_at_any_depth_and_slash_anchors(env: Env) -> None:
    a = touch(env.path("a.py"), 1)
    b = touch(env.path("pkg/b.py"), 2)
    out = await env.run(GLOB, {"pattern": "*.py"})
    assert set(out.text.split("\n")) == {str(a), str(b)}
    out = await env.run(GLOB, {"pattern": "pkg/*.py"})
    assert out.text == str(b)


async def test_gitignore_is_respected_and_vcs_dirs_skipped(env: Env) -> None:
    (env.root / ".git").mkdir()
    (env.root / ".git" / "config.py").write_text("x")
    env.write_text(".gitignore", "build/\n*.log\n")
    kept = touch(env.path("src/app.py"), 1)
    touch(env.path("build/gen.py"), 2)
    touch(env.path("debug.log"), 3)
    hidden = touch(env.path(".github/ci.py"), 4)
    out = await env.run(GLOB, {"pattern": "**/*"})
    listed = set(out.text.split("\n"))
    assert str(kept) in listed
    assert str(hidden) in listed  # hidden files are listed ...
    assert not any("/.git/" in line for line in listed)  # ... version control is not
    assert not any("build" in line or line.endswith(".log") for line in listed), listed


async def test_an_exact_path_that_gitignore_excludes_is_returned_with_a_note(env: Env) -> None:
    (env.root / ".git").mkdir()
    env.write_text(".gitignore", "build/\n*.log\n")
    gen = touch(env.path("build/gen.py"), 1)
    log = touch(env.path("debug.log"), 2)
    for pattern, found in (("build/gen.py", gen), ("debug.log", log), (str(log), log)):
        out = await env.run(GLOB, {"pattern": pattern})
        assert out.text.startswith(f"{found}\n") and "excluded by .gitignore" in out.text
        assert not out.is_error
    out = await env.run(GLOB, {"pattern": "build/missing.py"})
    assert out.text == "No files found"


async def test_no_match(env: Env) -> None:
    touch(env.path("a.py"), 1)
    out = await env.run(GLOB, {"pattern": "*.rs"})
    assert out.text == "No files found"
    assert not out.is_error


async def test_results_capped_with_note(env: Env) -> None:
    for i in range(MAX_RESULTS + 5):
        touch(env.path(f"f{i:03}.txt"), 1_000 + i)
    out = await env.run(GLOB, {"pattern": "*.txt"})
    lines = out.text.split("\n")
    assert lines[0] == str(env.path(f"f{MAX_RESULTS + 4:03}.txt"))
    assert len([line for line in lines if line.startswith("/")]) == MAX_RESULTS
    assert "truncated" in lines[-1]
    assert f"showing the {MAX_RESULTS} most recently modified of {MAX_RESULTS + 5}" in lines[-1]
    assert out.raw_output == {"count": MAX_RESULTS, "total": MAX_RESULTS + 5, "truncated": True}


async def test_relative_path_resolves_against_cwd(env: Env) -> None:
    inner = touch(env.path("pkg/sub/x.py"), 1)
    touch(env.path("other/y.py"), 2)
    out = await env.run(GLOB, {"pattern": "**/*.py", "path": "pkg"})
    assert out.text == str(inner)


async def test_absolute_pattern(env: Env) -> None:
    inner = touch(env.path("pkg/sub/x.py"), 1)
    touch(env.path("x.py"), 2)
    prepared = await env.prepare(GLOB, {"pattern": f"{env.root}/pkg/**/*.py"})
    assert prepared.paths == (env.root / "pkg",)
    out = await env.run(GLOB, {"pattern": f"{env.root}/pkg/**/*.py"})
    assert out.text == str(inner)


async def test_pattern_starting_with_bang_is_a_name(env: Env) -> None:
    bang = touch(env.path("!important.txt"), 1)
    touch(env.path("other.txt"), 2)
    out = await env.run(GLOB, {"pattern": "!important.txt"})
    assert out.text == str(bang)


async def test_missing_path(env: Env) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        await env.run(GLOB, {"pattern": "*", "path": "nope"})


async def test_path_must_be_a_directory(env: Env) -> None:
    file = touch(env.path("a.py"), 1)
    with pytest.raises(ToolError, match="not a directory"):
        await env.run(GLOB, {"pattern": "*", "path": str(file)})


def test_flags() -> None:
    assert GLOB.read_only and GLOB.concurrency_safe
    assert not GLOB.reads_disk and not GLOB.writes_disk
    assert GLOB.kind == "search"
    assert GLOB.spec().input_schema["required"] == ["pattern"]


@pytest.mark.parametrize(
    "pattern", ["*.py", "**/*.py", "src/**/*.ts", "*", "src/**", "**/*.tar.gz"]
)
def test_dense_patterns_leave_one_core_to_the_stat_thread(pattern: str) -> None:
    assert listing_threads_args(pattern, 1) == ["--threads=1"]
    assert listing_threads_args(pattern, 2) == ["--threads=1"]
    assert listing_threads_args(pattern, 8) == ["--threads=7"]
    assert listing_threads_args(pattern, 64) == ["--threads=12"]
    assert listing_threads_args(pattern)[0].startswith("--threads=")


@pytest.mark.parametrize(
    "pattern",
    ["**/test_*.py", "setup.py", "*.{ts,tsx}", "src/*_test.go", "a?.py", "[ab].py", "**/.env"],
)
def test_other_patterns_list_with_ripgreps_default_threads(pattern: str) -> None:
    assert listing_threads_args(pattern, 2) == []
