"""Glob and Grep pinned on one tree with every kind of ignore file, hidden files, symlinks and
names whose path order differs from plain string order.

The expected answers were recorded from the tools when ripgrep itself sorted (``--sortr=
modified`` for Glob, ``--sort=path`` for Grep's content and count modes); they hold the result
sets and their order fixed while the sorting moves into the tools.
"""

from __future__ import annotations

import os

import pytest

from lsp_agent.tools.glob import GlobTool
from lsp_agent.tools.grep import GrepTool

from .conftest import Env

GLOB = GlobTool()
GREP = GrepTool()

# path -> (mtime in s, content); mtimes are distinct and in no alphabetical order.
FILES: dict[str, tuple[int, str]] = {
    "a.py": (1_000_040, "needle a\n"),
    "a-c.py": (1_000_020, "needle a-c\nother\nneedle again\n"),
    "a/b.py": (1_000_070, "x\nneedle in a/b\ny\n"),
    "a/b/c.py": (1_000_010, "needle deep\n"),
    "B.py": (1_000_090, "Needle upper\n"),
    ".hidden.py": (1_000_030, "needle hidden\n"),
    ".hid/x.py": (1_000_100, "needle in hidden dir\n"),
    "build/gen.py": (1_000_200, "needle ignored by .gitignore dir\n"),
    "debug.log": (1_000_210, "needle ignored log\n"),
    "keep.log": (1_000_050, "needle kept log\n"),
    "secret_dir/s.py": (1_000_220, "needle ignored by .ignore\n"),
    "x.tmp": (1_000_230, "needle ignored by .rgignore\n"),
    "pkg/local_x.py": (1_000_240, "needle ignored by nested .gitignore\n"),
    "pkg/mod.py": (1_000_060, "one\nneedle mod\nthree\nfour\nfive\nneedle mod again\n"),
    "pkg/sub/ignored_here.py": (1_000_250, "needle ignored by anchored rule\n"),
    "pkg/sub/kept.py": (1_000_080, "kept\n"),
    "deep/1/2/3/d.py": (1_000_005, "needle at depth\n"),
    "ünï.py": (1_000_015, "needle unicode\n"),
    "notes.txt": (1_000_001, "needle text\n"),
}
# path -> (mtime in s, content)
IGNORE_FILES: dict[str, tuple[int, str]] = {
    ".gitignore": (999_004, "build/\n*.log\n!keep.log\n"),
    ".ignore": (999_003, "secret_dir/\n"),
    ".rgignore": (999_002, "*.tmp\n"),
    "pkg/.gitignore": (999_001, "local_*.py\n/sub/ignored_here.py\n"),
}


@pytest.fixture
def tree(env: Env) -> Env:
    (env.root / ".git").mkdir()
    (env.root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (env.root / ".git" / "needle.py").write_text("needle in .git\n")
    for name, (mtime, text) in (FILES | IGNORE_FILES).items():
        env.write_text(name, text)
        os.utime(env.path(name), (mtime, mtime))
    # Symlinks are not followed: a link to a file, to a directory and a dangling one.
    os.symlink(env.path("a.py"), env.path("link_file.py"))
    os.symlink(env.path("pkg"), env.path("link_dir"))
    os.symlink(env.path("nowhere.py"), env.path("broken.py"))
    return env


def absolute(env: Env, names: list[str]) -> list[str]:
    return [str(env.path(name)) for name in names]


GLOB_CASES: list[tuple[dict[str, str], list[str]]] = [
    (
        {"pattern": "**/*.py"},
        [
            ".hid/x.py",
            "B.py",
            "pkg/sub/kept.py",
            "a/b.py",
            "pkg/mod.py",
            "a.py",
            ".hidden.py",
            "a-c.py",
            "ünï.py",
            "a/b/c.py",
            "deep/1/2/3/d.py",
        ],
    ),
    ({"pattern": "*.py", "path": "pkg"}, ["pkg/sub/kept.py", "pkg/mod.py"]),
    ({"pattern": "pkg/*.py"}, ["pkg/mod.py"]),
    ({"pattern": "*.log"}, ["keep.log"]),
    ({"pattern": "a/**"}, ["a/b.py", "a/b/c.py"]),
    ({"pattern": "{a,B}*.py"}, ["B.py", "a.py", "a-c.py"]),
    ({"pattern": "[ab]*.py"}, ["a/b.py", "a.py", "a-c.py"]),
    ({"pattern": "?.py"}, [".hid/x.py", "B.py", "a/b.py", "a.py", "a/b/c.py", "deep/1/2/3/d.py"]),
    ({"pattern": ".*"}, [".hidden.py", ".gitignore", ".ignore", ".rgignore", "pkg/.gitignore"]),
    ({"pattern": "**/*.tmp"}, []),
    ({"pattern": "link*"}, []),
]


@pytest.mark.parametrize(("raw", "expected"), GLOB_CASES)
async def test_glob_result_set_and_order(
    tree: Env, raw: dict[str, str], expected: list[str]
) -> None:
    out = await tree.run(GLOB, raw)
    if not expected:
        assert out.text == "No files found"
        return
    assert out.text.split("\n") == absolute(tree, expected)
    assert out.raw_output is not None
    assert (out.raw_output["count"], out.raw_output["truncated"]) == (len(expected), False)


async def test_glob_everything_is_newest_first(tree: Env) -> None:
    every = FILES | IGNORE_FILES
    expected = sorted((name for name in every if _listed(name)), key=lambda name: -every[name][0])
    out = await tree.run(GLOB, {"pattern": "**/*"})
    assert out.text.split("\n") == absolute(tree, expected)


def _listed(name: str) -> bool:
    return name not in {
        "build/gen.py",
        "debug.log",
        "secret_dir/s.py",
        "x.tmp",
        "pkg/local_x.py",
        "pkg/sub/ignored_here.py",
    }


GREP_CASES: list[tuple[dict[str, object], list[str]]] = [
    (
        {"pattern": "needle"},
        [
            "Found 11 files",
            ".hid/x.py",
            "a/b.py",
            "pkg/mod.py",
            "keep.log",
            "a.py",
            ".hidden.py",
            "a-c.py",
            "ünï.py",
            "a/b/c.py",
            "deep/1/2/3/d.py",
            "notes.txt",
        ],
    ),
    (
        {"pattern": "needle", "output_mode": "content"},
        [
            ".hid/x.py:1:needle in hidden dir",
            ".hidden.py:1:needle hidden",
            "a/b/c.py:1:needle deep",
            "a/b.py:2:needle in a/b",
            "a-c.py:1:needle a-c",
            "a-c.py:3:needle again",
            "a.py:1:needle a",
            "deep/1/2/3/d.py:1:needle at depth",
            "keep.log:1:needle kept log",
            "notes.txt:1:needle text",
            "pkg/mod.py:2:needle mod",
            "pkg/mod.py:6:needle mod again",
            "ünï.py:1:needle unicode",
        ],
    ),
    (
        {"pattern": "needle", "output_mode": "content", "-C": 1, "glob": "*.py"},
        [
            ".hid/x.py:1:needle in hidden dir",
            "--",
            ".hidden.py:1:needle hidden",
            "--",
            "a/b/c.py:1:needle deep",
            "--",
            "a/b.py-1-x",
            "a/b.py:2:needle in a/b",
            "a/b.py-3-y",
            "--",
            "a-c.py:1:needle a-c",
            "a-c.py-2-other",
            "a-c.py:3:needle again",
            "--",
            "a.py:1:needle a",
            "--",
            "deep/1/2/3/d.py:1:needle at depth",
            "--",
            # A glob is ripgrep's --glob: it overrides ignore rules for the files it names.
            "pkg/local_x.py:1:needle ignored by nested .gitignore",
            "--",
            "pkg/mod.py-1-one",
            "pkg/mod.py:2:needle mod",
            "pkg/mod.py-3-three",
            "--",
            "pkg/mod.py-5-five",
            "pkg/mod.py:6:needle mod again",
            "--",
            "pkg/sub/ignored_here.py:1:needle ignored by anchored rule",
            "--",
            "ünï.py:1:needle unicode",
        ],
    ),
    (
        {"pattern": "needle", "output_mode": "content", "-n": False, "-A": 1, "type": "py"},
        [
            ".hid/x.py:needle in hidden dir",
            "--",
            ".hidden.py:needle hidden",
            "--",
            "a/b/c.py:needle deep",
            "--",
            "a/b.py:needle in a/b",
            "a/b.py-y",
            "--",
            "a-c.py:needle a-c",
            "a-c.py-other",
            "a-c.py:needle again",
            "--",
            "a.py:needle a",
            "--",
            "deep/1/2/3/d.py:needle at depth",
            "--",
            "pkg/mod.py:needle mod",
            "pkg/mod.py-three",
            "--",
            "pkg/mod.py:needle mod again",
            "--",
            "ünï.py:needle unicode",
        ],
    ),
    (
        {"pattern": "needle", "output_mode": "count", "-i": True},
        [
            ".hid/x.py:1",
            ".hidden.py:1",
            "B.py:1",
            "a/b/c.py:1",
            "a/b.py:1",
            "a-c.py:2",
            "a.py:1",
            "deep/1/2/3/d.py:1",
            "keep.log:1",
            "notes.txt:1",
            "pkg/mod.py:2",
            "ünï.py:1",
            "",
            "Found 14 matching lines in 12 files.",
        ],
    ),
    (
        {"pattern": "needle", "output_mode": "content", "head_limit": 3},
        [
            ".hid/x.py:1:needle in hidden dir",
            ".hidden.py:1:needle hidden",
            "a/b/c.py:1:needle deep",
            "(showing the first 3 of 13 lines)",
        ],
    ),
    # A symlinked directory given as the path is searched under its resolved name.
    (
        {"pattern": "needle", "path": "link_dir", "output_mode": "count"},
        ["pkg/mod.py:2", "", "Found 2 matching lines in 1 file."],
    ),
]


@pytest.mark.parametrize(("raw", "expected"), GREP_CASES)
async def test_grep_result_set_and_order(
    tree: Env, raw: dict[str, object], expected: list[str]
) -> None:
    out = await tree.run(GREP, raw)
    prefix = str(tree.root) + "/"
    lines = [
        line.removeprefix(prefix) if line.startswith(prefix) else line
        for line in out.text.split("\n")
    ]
    assert lines == expected
