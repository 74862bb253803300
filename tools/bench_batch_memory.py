#!/usr/bin/env python3
"""The memory check after a tool batch, in the layout of the fix_bug harness scenario.

A session (``SessionManager`` on ``DiskHost``) in a small project (``textstats/`` and ``tests/``
with five Python files, no memory file anywhere, the user's home beside it) runs the check the
loop makes after every tool batch (``Session._after_batch``) for three batches: two ``Read``
calls in two folders, a ``Grep`` listing two files, a ``Glob`` listing all five. Each in three
states of the project's folders:

``settled``
    not changed for minutes (what was missing there is trusted as still missing);
``recent``
    changed a moment ago, then left alone (what was missing is stat'ed again);
``changing``
    the project folder and ``textstats/`` change before every check, as a test run (a cache
    folder) and an edit (a temporary file renamed into place) change them in the harness.

Prints the wall time per check in µs (median of ``--checks``). ``--baseline CHECKOUT`` runs
another checkout's code and this one in alternation, each round in fresh processes.

    python tools/bench_batch_memory.py [--checks 300]
    python tools/bench_batch_memory.py --baseline CHECKOUT [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from lsp_agent.model.types import ModelRequest, ModelStreamEvent

ROOT = Path(__file__).resolve().parent.parent
FILES = (
    "textstats/__init__.py",
    "textstats/core.py",
    "textstats/report.py",
    "tests/test_core.py",
    "tests/test_report.py",
)


class _NoModel:
    """The check never asks the model."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        raise RuntimeError("no model in this benchmark")

    async def aclose(self) -> None:
        return None


def _age(folders: list[Path], seconds: float) -> None:
    then = time.time() - seconds
    for folder in folders:
        os.utime(folder, (then, then))


def measure(checks: int) -> dict[str, float]:
    """µs per check by ``batch/state``, in this process with this checkout's code."""
    from lsp_agent.agent.env import AgentConfig
    from lsp_agent.sessions.manager import SessionManager
    from lsp_agent.workspace.disk_host import DiskHost

    base = Path(tempfile.mkdtemp(prefix="lsp-agent-bench-memory-")).resolve()
    ws, home = base / "ws", base / "home"
    home.mkdir()
    for name in FILES:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("def f():\n    return 1\n")
    os.environ["HOME"] = str(home)
    manager = SessionManager(
        host=DiskHost(), model_factory=_NoModel, config=AgentConfig(model="bench")
    )
    session = manager.new(cwd=ws)
    session.start_memory()
    listed = "\n".join(str(ws / name) for name in FILES)
    batches: dict[str, Any] = {
        "Read,Read": (
            ("Read", {"file_path": str(ws / FILES[1])}, "1\tx"),
            ("Read", {"file_path": str(ws / FILES[3])}, "1\tx"),
        ),
        "Grep": (("Grep", {"pattern": "f"}, f"{ws / FILES[1]}:1:x\n{ws / FILES[2]}:1:x"),),
        "Glob": (("Glob", {"pattern": "**/*.py"}, listed),),
    }
    folders = [ws, ws / "textstats", ws / "tests"]
    out: dict[str, float] = {}
    try:
        for name, calls in batches.items():
            for state in ("settled", "recent", "changing"):
                _age(folders, 600 if state == "settled" else 0)
                times = []
                for _ in range(checks):
                    if state == "changing":
                        _age(folders[:2], 0)
                    start = time.perf_counter_ns()
                    session._after_batch(calls)
                    times.append((time.perf_counter_ns() - start) / 1000)
                out[f"{name}/{state}"] = statistics.median(times[checks // 10 :])
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", type=int, default=300)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.checks)))
        return 0
    checkouts = {"this": ROOT}
    if args.baseline is not None:
        checkouts = {"baseline": args.baseline.resolve(), **checkouts}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    for _ in range(args.rounds):
        for name, checkout in checkouts.items():
            done = subprocess.run(
                [sys.executable, __file__, "--child", "--checks", str(args.checks)],
                env={**os.environ, "PYTHONPATH": str(checkout)},
                capture_output=True,
                text=True,
                check=True,
            )
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    keys = list(runs["this"][0])
    print(f"| µs per check (median) | {' | '.join(checkouts)} |")
    print(f"| --- | {' | '.join('---:' for _ in checkouts)} |")
    for key in keys:
        cells = [f"{statistics.median(r[key] for r in runs[name]):.0f}" for name in checkouts]
        print(f"| {key} | {' | '.join(cells)} |")
    print(f"\nload average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
