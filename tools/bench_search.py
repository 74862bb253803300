#!/usr/bin/env python3
"""Glob and Grep on a large tree, side by side with raw ripgrep.

``make-tree DIR`` writes a deterministic tree (default 260,000 files, ≈ 2.1 GB: source-like
text files of 2-16 KiB in nested packages, a git repository with a ``.gitignore`` that ignores
a build directory and ``*.log`` files, hidden directories). ``run DIR`` then times, round by
round and interleaved (the order rotates every round):

``tool``
    The tool in this process, as the executor calls it (parse → prepare → call).
``rg same``
    Exactly the ripgrep argv the tool runs, output read to the end — except that Glob's
    ``--threads`` (one core fewer than the machine has, left to its stat thread) is left
    out, so ripgrep lists with its own default thread count, the faster listing on an idle
    machine: the stricter comparison.
``rg plain``
    The plain ripgrep command a user would type for the same question (Glob: ``rg --files
    --glob PATTERN``; Grep: the same flags without the tool's path markers).
``rg sorted``
    The argv the tools ran before they ordered results themselves (``--sortr=modified`` over
    every file for Glob, ``--sort=path`` for Grep's content and count modes).

It prints medians in ms (min-max) and the per-round ratios tool / rg (median, min-max), so a
shared, noisy machine affects both sides of a ratio alike. The page cache is warmed first.

    python tools/bench_search.py make-tree /tmp/bigtree
    python tools/bench_search.py run /tmp/bigtree --rounds 7 [--only Glob] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from lsp_agent.tools._globmatch import name_prefilter_args
from lsp_agent.tools._rg import base_args, exclude_args, find_rg
from lsp_agent.tools._rgorder import CONTENT_ARGS, COUNT_ARGS
from lsp_agent.tools.base import ReadState, Tool, ToolContext
from lsp_agent.tools.glob import GlobTool
from lsp_agent.tools.grep import GrepInput, GrepTool, OutputMode, rg_args
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.workspace import Workspace

WORDS = [
    *[
        "self",
        "value",
        "result",
        "config",
        "request",
        "response",
        "session",
        "handler",
        "parser",
        "token",
        "buffer",
    ],
    *[
        "index",
        "import",
        "return",
        "yield",
        "async",
        "await",
        "class",
        "def",
        "lambda",
        "None",
        "True",
        "False",
        "error",
    ],
]


def make_tree(root: Path, *, files: int, seed: int) -> tuple[int, int]:
    """Write the tree; returns (files, bytes). Deterministic for a given ``seed``."""
    rng = random.Random(seed)
    blobs = [_blob(rng, size) for size in (2048, 4096, 8192, 12288, 16384) for _ in range(8)]
    root.mkdir(parents=True, exist_ok=False)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    exts = [".py"] * 5 + [".js", ".ts", ".md", ".txt", ".json", ".log"]
    written = total = 0
    package = 0
    while written < files:
        top = "build" if package % 50 == 7 else (".cache" if package % 50 == 9 else "src")
        folder = root / top / f"pkg{package // 40:03}" / f"mod{package:05}"
        folder.mkdir(parents=True)
        for i in range(min(100, files - written)):
            ext = exts[(package + i) % len(exts)]
            name = f"test_{i:03}{ext}" if i % 10 == 0 else f"file_{i:03}{ext}"
            data = blobs[(package * 7 + i) % len(blobs)]
            if i % 13 == 0:
                data = b"import asyncio\n" + data
            if i % 17 == 0:
                data += b"\ndef main():\n    return 0\n"
            if i % 19 == 0:
                data += f"\nclass Pkg{package}Error(Exception):\n    pass\n".encode()
            path = folder / name
            path.write_bytes(data)
            mtime = 1_700_000_000 + rng.randrange(10_000_000)
            os.utime(path, (mtime, mtime))
            written += 1
            total += len(data)
        package += 1
    return written, total


def _blob(rng: random.Random, size: int) -> bytes:
    lines: list[str] = []
    length = 0
    while length < size:
        indent = "    " * rng.randrange(3)
        line = indent + " ".join(rng.choice(WORDS) for _ in range(rng.randrange(3, 10)))
        lines.append(line)
        length += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


@dataclass(frozen=True, kw_only=True)
class Query:
    """One question, asked of the tool and of ripgrep."""

    name: str
    tool: Tool[Any, Any]
    raw: dict[str, Any]
    same: list[str]
    plain: list[str]
    sorted: list[str]


def queries(root: Path) -> list[Query]:
    """The benchmark's questions (those of the earlier side-by-side study)."""
    rg = find_rg()
    out: list[Query] = []
    for pattern, name_glob in (("**/*.py", "*.py"), ("**/test_*.py", "test_*.py")):
        same = [
            rg,
            *base_args(),
            "--files",
            *name_prefilter_args(pattern),
            *exclude_args(),
            str(root),
        ]
        plain = [rg, "--files", "--hidden", f"--glob={name_glob}", str(root)]
        old = [rg, *base_args(), "--files", "--sortr=modified", *exclude_args(), str(root)]
        out.append(
            Query(
                name=f"Glob {pattern}",
                tool=GlobTool(),
                raw={"pattern": pattern},
                same=same,
                plain=plain,
                sorted=old,
            )
        )
    grep_cases: list[tuple[str, dict[str, Any]]] = [
        ("Grep 'def main' files", {"pattern": "def main"}),
        (
            "Grep 'import asyncio' content -n",
            {"pattern": "import asyncio", "output_mode": "content", "-n": True},
        ),
        ("Grep no match", {"pattern": "zz_no_such_text_zz"}),
        (
            "Grep count 'class \\w+Error' *.py",
            {"pattern": r"class \w+Error", "output_mode": "count", "glob": "*.py"},
        ),
        (
            "Grep 'import asyncio' content -C2",
            {"pattern": "import asyncio", "output_mode": "content", "-C": 2, "head_limit": 50},
        ),
    ]
    for name, raw in grep_cases:
        inp = GrepInput.model_validate(raw)
        mode: OutputMode = inp.output_mode or "files_with_matches"
        args = rg_args(inp, mode, root)
        plain = [arg for arg in args if arg not in CONTENT_ARGS and arg not in COUNT_ARGS]
        at = plain.index("--")
        old = plain if mode == "files_with_matches" else [*plain[:at], "--sort=path", *plain[at:]]
        out.append(
            Query(
                name=name,
                tool=GrepTool(),
                raw=raw,
                same=[rg, *args],
                plain=[rg, *plain],
                sorted=[rg, *old],
            )
        )
    return out


def context(root: Path) -> ToolContext:
    host = DiskHost()
    return ToolContext(
        session_id="bench",
        cwd=root,
        roots=(root,),
        workspace=Workspace(host=host, roots=(root,)),
        read_state=ReadState(),
        progress=lambda _message: None,
    )


def time_tool(query: Query, root: Path) -> float:
    async def once() -> None:
        ctx = context(root)
        inp = query.tool.parse(query.raw)
        prepared = await query.tool.prepare(inp, ctx)
        await query.tool.call(inp, prepared, ctx)

    start = time.perf_counter()
    asyncio.run(once())
    return (time.perf_counter() - start) * 1000


def time_argv(argv: Sequence[str], root: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - start) * 1000


def run(root: Path, *, rounds: int, out_json: Path | None, only: str | None = None) -> None:
    root = root.resolve()
    subprocess.run(
        [find_rg(), "--files", "--hidden", str(root)], stdout=subprocess.DEVNULL, check=False
    )
    subprocess.run(
        [find_rg(), "-c", "zz_warm_zz", str(root)], stdout=subprocess.DEVNULL, check=False
    )
    load = os.getloadavg()
    results: dict[str, dict[str, list[float]]] = {}
    for query in queries(root):
        if only is not None and only not in query.name:
            continue
        configs: list[tuple[str, Callable[[], float]]] = [
            ("tool", partial(time_tool, query, root)),
            ("rg same", partial(time_argv, query.same, root)),
            ("rg plain", partial(time_argv, query.plain, root)),
            ("rg sorted", partial(time_argv, query.sorted, root)),
        ]
        times: dict[str, list[float]] = {name: [] for name, _ in configs}
        for _, measure in configs:  # warm-up round
            measure()
        for r in range(rounds):
            order = configs[r % len(configs) :] + configs[: r % len(configs)]
            for name, measure in order:
                times[name].append(measure())
        results[query.name] = times
        print(f"done: {query.name}", file=sys.stderr)
    print(f"\n{rounds} rounds after 1 warm-up, interleaved; load average at start {load[0]:.1f}\n")
    print(
        "| query | tool ms | rg same args ms | rg plain ms | rg sorted (before) ms "
        "| tool / same | tool / plain | tool / sorted |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, times in results.items():
        cells = [_median(times[key]) for key in ("tool", "rg same", "rg plain", "rg sorted")]
        ratios = [_ratio(times["tool"], times[key]) for key in ("rg same", "rg plain", "rg sorted")]
        print(f"| {name} | " + " | ".join(cells + ratios) + " |")
    if out_json:
        out_json.write_text(
            json.dumps({"load": load, "rounds": rounds, "results": results}, indent=1)
        )


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"


def _ratio(tool: list[float], other: list[float]) -> str:
    ratios = [a / b for a, b in zip(tool, other, strict=True)]
    return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("make-tree", help="write the benchmark tree")
    make.add_argument("dir", type=Path)
    make.add_argument("--files", type=int, default=260_000)
    make.add_argument("--seed", type=int, default=1)
    bench = sub.add_parser("run", help="time the tools against ripgrep")
    bench.add_argument("dir", type=Path)
    bench.add_argument("--rounds", type=int, default=7)
    bench.add_argument("--json", type=Path)
    bench.add_argument("--only", help="time only the questions whose name contains this text")
    args = parser.parse_args(argv)
    if args.command == "make-tree":
        start = time.perf_counter()
        files, size = make_tree(args.dir, files=args.files, seed=args.seed)
        print(f"{files} files, {size / 1e9:.2f} GB in {time.perf_counter() - start:.0f} s")
    else:
        run(args.dir, rounds=args.rounds, out_json=args.json, only=args.only)


if __name__ == "__main__":
    main()
