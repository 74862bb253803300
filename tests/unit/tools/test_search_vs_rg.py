"""Glob and Grep against ripgrep's own sorting on a generated tree: the tools run ripgrep
unsorted and order in-process, and must give what ripgrep's single-threaded sort gives."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.tools._globmatch import compile_glob, name_prefilter_args, prefilter_is_exact
from lsp_agent.tools._rg import find_rg
from lsp_agent.tools._rgorder import CONTENT_ARGS, COUNT_ARGS, PathOrdered
from lsp_agent.tools.glob import GlobTool
from lsp_agent.tools.grep import GrepInput, GrepTool, rg_args

from .conftest import Env

GLOB = GlobTool()
GREP = GrepTool()

NAMES = ["a", "a-b", "a.b", "a_b", "B", "z", "é", "A b", ".h", "a{b}", "x,y", "\u03b1-1", "0"]
WORDS = ["alpha", "beta", "needle", "Needle", "gamma", "--", "needle--needle", ""]


@pytest.fixture
def random_tree(env: Env) -> Env:
    rng = random.Random(1234)
    (env.root / ".git").mkdir()
    env.write_text(".gitignore", "*.skip\nignored_dir/\n")
    for i in range(160):
        depth = rng.randint(0, 3)
        parts = [rng.choice(NAMES) for _ in range(depth)]
        name = rng.choice(NAMES) + rng.choice([".py", ".txt", ".skip", ".md", ""])
        if rng.random() < 0.05:
            parts.insert(0, "ignored_dir")
        path = env.root.joinpath(*parts, name)
        if path.is_dir() or any(p.is_file() for p in path.parents if p != env.root):
            continue
        lines = [" ".join(rng.choice(WORDS) for _ in range(3)) for _ in range(rng.randint(0, 8))]
        env.write_text(str(path.relative_to(env.root)), "\n".join(lines) + "\n")
        os.utime(path, (1_000_000 + i * 7, 1_000_000 + i * 7))
    return env


def sorted_rg(args: list[str], cwd: Path) -> list[str]:
    """What ripgrep prints for ``args`` with its own single-threaded path sort."""
    plain = [arg for arg in args if arg not in CONTENT_ARGS and arg not in COUNT_ARGS]
    at = plain.index("--")
    argv = [find_rg(), *plain[:at], "--sort=path", *plain[at:]]
    out = subprocess.run(argv, cwd=cwd, capture_output=True, check=False).stdout
    return [line for line in out.decode("utf-8", "replace").split("\n") if line]


GREP_CASES: list[dict[str, Any]] = [
    {"pattern": "needle", "output_mode": "content"},
    {"pattern": "needle", "output_mode": "content", "-C": 1},
    {"pattern": "needle", "output_mode": "content", "-B": 2, "-n": False},
    {"pattern": "needle", "output_mode": "content", "-A": 1, "-C": 0},
    {"pattern": "needle", "output_mode": "content", "-C": 0},
    {"pattern": "(?i)needle|gamma", "output_mode": "content", "-C": 3},
    {"pattern": "beta\\s+needle", "output_mode": "content", "multiline": True},
    {"pattern": "needle", "output_mode": "count"},
    {"pattern": "a", "output_mode": "count", "glob": "*.py"},
]


@pytest.mark.parametrize("raw", GREP_CASES)
async def test_grep_order_equals_ripgreps_sort(random_tree: Env, raw: dict[str, Any]) -> None:
    inp = GrepInput.model_validate(raw)
    expected = sorted_rg(rg_args(inp, raw["output_mode"], random_tree.root), random_tree.root)
    assert len(expected) > 10
    out = await random_tree.run(GREP, raw)
    if raw["output_mode"] == "count":
        text, _, summary = out.text.rpartition("\n\n")
        assert summary.startswith("Found ")
    else:
        text = out.text
    lines = text.split("\n")
    if lines[-1].startswith("(output cut at"):
        lines.pop()
        expected = expected[: len(lines)]
    assert lines == expected


GLOB_PATTERNS = ["**/*.py", "*.txt", "a*", "*b*.md", "{a,z}*", "*.{py,md}", "é*", ".h*", "*"]


@pytest.mark.parametrize("pattern", GLOB_PATTERNS)
async def test_glob_equals_listing_sorted_by_ripgrep(random_tree: Env, pattern: str) -> None:
    root = random_tree.root
    argv = [find_rg(), "--no-config", "--hidden", "--files", "--sortr=modified", "--glob=!.git"]
    listing = subprocess.run([*argv, str(root)], capture_output=True, check=False).stdout
    matcher = compile_glob(pattern)
    prefix = f"{root}/"
    expected = [
        path
        for path in listing.decode().split("\n")
        if path and matcher.fullmatch(path.removeprefix(prefix))
    ]
    assert expected
    out = await random_tree.run(GLOB, {"pattern": pattern})
    shown = out.text.split("\n")
    if len(expected) > 100:
        assert shown.pop() == (
            f"(Results are truncated: showing the 100 most recently modified of {len(expected)} "
            "matching files. Consider using a more specific path or pattern.)"
        )
    assert shown == expected[:100]


@pytest.mark.parametrize(
    ("pattern", "name_glob"),
    [
        ("**/*.py", "*.py"),
        ("src/**/test_*.py", "test_*.py"),
        ("*.{ts,tsx}", "*.{ts,tsx}"),
        (".*", ".*"),
        ("!x.txt", "!x.txt"),
    ],
)
def test_name_prefilter_for_plain_name_globs(pattern: str, name_glob: str) -> None:
    assert name_prefilter_args(pattern) == [
        f"--type-add=lspagentglob:{name_glob}",
        "--type=lspagentglob",
    ]


@pytest.mark.parametrize(
    "pattern",
    ["**", "src/**", "*", "?.py", "[ab].py", "*.{a,{b,c}}", "a\\*.py", "{a/b,c}.py", "x:y.py"],
)
def test_no_name_prefilter_where_the_matchers_could_disagree(pattern: str) -> None:
    assert name_prefilter_args(pattern) == []


def test_path_ordered_keeps_an_exact_prefix_within_the_budget() -> None:
    def run(budget: int) -> tuple[list[str], int, bool]:
        collector = PathOrdered(count=False, budget_bytes=budget)
        for name in ["m", "b/x", "z", "a-c", "a/b", "c", "b.y", "q/r/s"]:
            collector.feed(b"".join(f"/r/{name}\0:{i}\0:line {i}\n".encode() for i in (1, 2)))
        ordered = collector.result()
        return ordered.lines, ordered.total_lines, ordered.cut

    full, total, cut = run(1 << 20)
    assert not cut and total == 16
    assert full[:4] == ["/r/a/b:1:line 1", "/r/a/b:2:line 2", "/r/a-c:1:line 1", "/r/a-c:2:line 2"]
    kept, total, cut = run(60)
    assert cut and total == 16
    assert 0 < len(kept) < len(full)
    assert kept == full[: len(kept)]


@pytest.mark.parametrize("raw", [GREP_CASES[1], GREP_CASES[5], GREP_CASES[7]])
def test_path_ordered_is_the_same_however_the_output_is_split(
    random_tree: Env, raw: dict[str, Any]
) -> None:
    root = random_tree.root
    inp = GrepInput.model_validate(raw)
    args = rg_args(inp, raw["output_mode"], root)
    unsorted = subprocess.run([find_rg(), *args], cwd=root, capture_output=True, check=False)
    lines = unsorted.stdout.rstrip(b"\n").split(b"\n")
    expected = sorted_rg(args, root)
    rng = random.Random(7)
    splits = [[1] * len(lines), [len(lines)], [rng.randint(1, 4) for _ in range(len(lines))]]
    for sizes in splits:
        collector = PathOrdered(count=raw["output_mode"] == "count", budget_bytes=1 << 20)
        at = 0
        for size in sizes:
            if at < len(lines):
                collector.feed(b"\n".join(lines[at : at + size]))
            at += size
        ordered = collector.result()
        assert ordered.lines == expected
        assert ordered.total_lines == len(expected)


def test_path_ordered_decodes_only_what_is_asked_for() -> None:
    def collect() -> PathOrdered:
        collector = PathOrdered(count=False, budget_bytes=1 << 20)
        for name in ["m", "b", "a"]:
            collector.feed(b"".join(f"/r/{name}\0:{i}\0:line {i}\r\n".encode() for i in (1, 2)))
        return collector

    full = collect().result()
    assert full.lines[:2] == ["/r/a:1:line 1", "/r/a:2:line 2"]
    assert collect().result(max_lines=3).lines == full.lines[:3]
    # Stops once the joined text is longer than max_chars: enough to cut it there.
    short = collect().result(max_chars=20)
    assert short.lines == full.lines[:2]
    assert short.total_lines == full.total_lines == 6


@pytest.mark.parametrize(
    ("pattern", "exact"),
    [
        ("*.py", True),
        ("**/test_*.py", True),
        ("*.{ts,tsx}", True),
        ("/*.py", False),
        ("src/*.py", False),
        ("**/src/*.py", False),
        ("*.py/", False),
        ("**/*.py/", False),
        ("?.py", False),
        ("**", False),
    ],
)
def test_the_name_filter_alone_decides_only_for_names_at_any_depth(
    pattern: str, exact: bool
) -> None:
    assert prefilter_is_exact(pattern) is exact
