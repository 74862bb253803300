#!/usr/bin/env python3
"""Glob and Grep calls on small trees, in this process, as the executor makes them (parse →
prepare → call): the per-call cost a search turn pays when ripgrep's own work is tiny.

Two trees are written to a scratch folder: ``tiny`` (9 files: a small Python package and its
tests) and ``modules`` (214 files: 200 generated modules of ≈ 60 lines in ten packages). For
each tree, one fresh pair of tools makes ``--calls`` rounds of four calls (Glob ``**/*.py``,
Grep files-with-matches, content with ``-n``, and count), after one round that is not
counted (the first call of a process pays one-time costs, reported apart). Printed per call:
the median wall time (ms) and the median CPU time (ms) of this process and its children
together (``getrusage``: ripgrep's CPU time counts once it is reaped).

    python tools/bench_search_small.py --calls 40 [--json out.json]

To compare two checkouts, run it alternately with ``PYTHONPATH`` set to each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsp_agent.tools.base import ReadState, Tool, ToolContext
from lsp_agent.tools.glob import GlobTool
from lsp_agent.tools.grep import GrepTool
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.workspace import Workspace

AREAS = ("billing", "catalog", "checkout", "auth", "search")
AREAS_ALL = (*AREAS, "shipping", "reports", "users", "inventory", "notify")

CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("Glob **/*.py", {"pattern": "**/*.py"}),
    ("Grep files", {"pattern": "def median|BENCH-TODO auth-01"}),
    (
        "Grep content -n",
        {"pattern": "def median|BENCH-TODO auth-01", "output_mode": "content", "-n": True},
    ),
    ("Grep count", {"pattern": "return", "output_mode": "count"}),
)


def write_trees(base: Path) -> dict[str, Path]:
    """Write the two trees under ``base``; their roots by name."""
    tiny = base / "tiny"
    files = {
        "README.md": "# textstats\n",
        "pytest.ini": "[pytest]\ntestpaths = tests\n",
        "textstats/__init__.py": "from .core import mean, median\n",
        "textstats/core.py": "def mean(v):\n    return sum(v) / len(v)\n\n\n"
        "def median(v):\n    s = sorted(v)\n    return s[len(s) // 2]\n",
        "textstats/report.py": "from .core import mean, median\n\n\ndef render(t):\n"
        "    return f'{mean(t)} {median(t)}'\n",
        "tests/test_core.py": "from textstats.core import median\n\n\ndef test_median():\n"
        "    assert median([3, 1, 2]) == 2\n",
        "tests/test_report.py": "from textstats.report import render\n",
        ".gitignore": "__pycache__/\n",
        "setup.cfg": "[metadata]\nname = textstats\n",
    }
    for name, text in files.items():
        (tiny / name).parent.mkdir(parents=True, exist_ok=True)
        (tiny / name).write_text(text)
    modules = base / "modules"
    for area_index, area in enumerate(AREAS_ALL):
        package = modules / "src" / "app" / area
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(f'"""{area}."""\n')
        for index in range(20):
            body = [f'"""Module {area}_{index:02d}."""', "", "import math", ""]
            for function in range(8):
                body += [
                    f"def {area}_op_{index:02d}_{function}(value, count={function + 1}):",
                    "    value = value * 2 + count",
                    *(
                        [f"    # BENCH-TODO {area}-{index:02d}: clamp"]
                        if function == 3 and area_index < len(AREAS)
                        else []
                    ),
                    "    return math.fsum([value, count])",
                    "",
                ]
            (package / f"{area}_{index:02d}.py").write_text("\n".join(body) + "\n")
    (modules / "README.md").write_text("# app\n")
    (modules / "pyproject.toml").write_text('[project]\nname = "app"\n')
    (modules / "src" / "app" / "__init__.py").write_text("")
    return {"tiny": tiny, "modules": modules}


def _cpu_ms() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime) * 1000


async def measure(root: Path, rounds: int) -> dict[str, Any]:
    """Wall and CPU ms per call (medians over ``rounds``) and the first round's wall ms."""
    ctx = ToolContext(
        session_id="bench",
        cwd=root,
        roots=(root,),
        workspace=Workspace(host=DiskHost(), roots=(root,)),
        read_state=ReadState(),
    )
    tools: dict[str, Tool[Any, Any]] = {"Glob": GlobTool(), "Grep": GrepTool()}
    wall: dict[str, list[float]] = {name: [] for name, _ in CALLS}
    cpu: dict[str, list[float]] = {name: [] for name, _ in CALLS}
    first: dict[str, float] = {}
    for round_index in range(rounds + 1):
        for name, raw in CALLS:
            tool = tools[name.split()[0]]
            started, cpu_started = time.perf_counter(), _cpu_ms()
            inp = tool.parse(raw)
            out = await tool.call(inp, await tool.prepare(inp, ctx), ctx)
            assert not out.is_error, out.text
            elapsed, used = (time.perf_counter() - started) * 1000, _cpu_ms() - cpu_started
            if round_index == 0:
                first[name] = round(elapsed, 2)
            else:
                wall[name].append(elapsed)
                cpu[name].append(used)
    return {
        "first_call_wall_ms": first,
        "wall_ms": {name: round(statistics.median(v), 2) for name, v in wall.items()},
        "cpu_ms": {name: round(statistics.median(v), 2) for name, v in cpu.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=40, help="counted rounds per tree")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-search-small-") as scratch:
        roots = write_trees(Path(scratch).resolve())
        results = {name: asyncio.run(measure(root, args.calls)) for name, root in roots.items()}
    for tree, figures in results.items():
        print(f"{tree}: first calls (wall ms) {figures['first_call_wall_ms']}")
        for name, _ in CALLS:
            print(
                f"  {name:16s} wall {figures['wall_ms'][name]:6.2f} ms"
                f"   CPU (with ripgrep) {figures['cpu_ms'][name]:6.2f} ms"
            )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
