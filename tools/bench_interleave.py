"""Run a benchmark against two source trees in alternation, so both see the same machine load.

Used by ``bench_sessions.py`` and ``bench_checkpoints.py`` (``--baseline SRC``): each round runs
the benchmark script once per tree in a fresh process, with ``PYTHONPATH`` naming that tree
(its ``lsp_agent`` package is imported), the order swapped every round; each run writes its
figures as JSON. A baseline tree is any checkout of the project, e.g. made with
``git worktree add /tmp/base <commit>`` or ``git archive <commit> | tar -x -C /tmp/base``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CURRENT = Path(__file__).resolve().parent.parent


def interleaved(
    script: Path, args: list[str], *, baseline: Path, rounds: int
) -> dict[str, list[dict[str, Any]]]:
    """Figures of ``rounds`` runs of ``script args --json OUT`` per tree: ``{"baseline": [...],
    "current": [...]}``, plus the load average before and after under ``"load"``."""
    trees = {"baseline": baseline.resolve(), "current": CURRENT}
    out: dict[str, list[dict[str, Any]]] = {"baseline": [], "current": []}
    load = [os.getloadavg()[0]]
    for r in range(rounds):
        order = ["baseline", "current"] if r % 2 == 0 else ["current", "baseline"]
        for name in order:
            with tempfile.TemporaryDirectory() as tmp:
                result = Path(tmp) / "result.json"
                env = dict(os.environ, PYTHONPATH=str(trees[name]))
                subprocess.run(
                    [sys.executable, str(script), *args, "--json", str(result)],
                    env=env,
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
                out[name].append(json.loads(result.read_text()))
            load.append(os.getloadavg()[0])
    out["load"] = [{"min": min(load), "max": max(load)}]
    return out


def comparison(results: dict[str, list[dict[str, Any]]], keys: list[tuple[str, str]]) -> str:
    """A Markdown table: per figure (``key``, label), the median over rounds of each tree and
    the ratio current / baseline."""
    lines = [
        f"load average (1 min) during the runs: {results['load'][0]['min']:.1f}-"
        f"{results['load'][0]['max']:.1f}; {len(results['current'])} rounds per tree, interleaved",
        "",
        "| figure | baseline (median) | current (median) | current / baseline |",
        "| --- | ---: | ---: | ---: |",
    ]
    for key, label in keys:
        old = [r[key] for r in results["baseline"] if key in r]
        new = [r[key] for r in results["current"] if key in r]
        if not old or not new:
            continue
        a, b = statistics.median(old), statistics.median(new)
        ratio = f"{b / a:.2f}" if a else "-"
        lines.append(f"| {label} | {a:,.1f} | {b:,.1f} | {ratio} |")
    return "\n".join(lines)
