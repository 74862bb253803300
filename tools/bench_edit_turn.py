#!/usr/bin/env python3
"""What an ``Edit`` turn of ``lsp-agent run -p --output-format stream-json`` costs its process,
next to the ``Read`` turn before it: the whole per-turn path (the model client's request and
streamed answer over HTTP, the agent loop, the tool with its checkpoint, the stream-json lines),
without start-up.

``run -p`` runs in this process against the scripted Messages-API server in a separate process
(its work is not counted). Each round of the script reads one file of a generated project and
edits one line of it (as the harness's long session does, each round a different file); a run
of ``--rounds-long`` rounds minus a run of ``--rounds-short``, divided by the difference, is
one round's cost (a ``Read`` turn and an ``Edit`` turn): CPU time (``time.process_time``) and
wall time (which includes the edit's ``fsync``, and waiting for a core on a busy machine).

``--baseline CHECKOUT`` runs another checkout's code in alternation with this one, each sample
in a fresh process, so both see the same machine load.

    python tools/bench_edit_turn.py [--rounds-long 40] [--rounds-short 5] [--samples 3]
        [--baseline CHECKOUT]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["run", "-p", "edit them", "--output-format", "stream-json"]
ARGS += ["--permission-mode", "bypassPermissions"]
MODULE = "".join(f"def f{i}(value: int) -> int:\n    return value + {i}\n\n\n" for i in range(30))
"""A 120-line module (each round's file; the edit changes one line in its middle)."""


def _project(rounds: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="lsp-agent-bench-edit-")).resolve()
    for i in range(rounds):
        (root / f"m{i}.py").write_text(MODULE)
    return root


def _scenario(rounds: int):  # type: ignore[no-untyped-def]
    from lsp_agent.testing.scenario import reply, scenario, text, tool_use

    steps = []
    for i in range(rounds):
        path = f"{{{{cwd}}}}/m{i}.py"
        steps.append(reply(text("Reading."), tool_use("Read", {"file_path": path}, id=f"r{i}")))
        edit = {"file_path": path, "old_string": "value + 15\n", "new_string": "value - 15\n"}
        steps.append(reply(text("Editing."), tool_use("Edit", edit, id=f"e{i}")))
    steps.append(reply("Done."))
    return scenario(*steps, name=f"edit_{rounds}")


def _run(rounds: int) -> tuple[float, float]:
    """One ``run -p`` of ``rounds`` Read + Edit rounds in this process: its CPU and wall
    seconds."""
    sys.path.insert(0, str(ROOT / "tools"))
    import anthropic  # noqa: F401  (imported before the run: start-up, not a turn)
    from bench_turn_overhead import in_process_run

    from lsp_agent.cli import main

    cwd = _project(rounds)
    codes: list[int] = []
    with in_process_run(_scenario(rounds), cwd):
        cpu, wall = time.process_time(), time.perf_counter()
        codes.append(main(ARGS))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        # Counted before leaving: leaving removes the project.
        edited = sum("value - 15" in (cwd / f"m{i}.py").read_text() for i in range(rounds))
    if codes != [0] or edited != rounds:
        raise RuntimeError(f"run -p failed: exit {codes}, {edited} of {rounds} files edited")
    return cpu, wall


def _sample(checkout: Path, rounds: int) -> tuple[float, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(rounds)],
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        check=True,
    )
    cpu, wall = out.stdout.strip().splitlines()[-1].split()
    return float(cpu), float(wall)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds-long", type=int, default=40)
    parser.add_argument("--rounds-short", type=int, default=5)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        cpu, wall = _run(args.child)
        print(f"{cpu:.6f} {wall:.6f}")
        return 0
    checkouts = {"this": ROOT}
    if args.baseline is not None:
        checkouts = {"baseline": args.baseline.resolve(), **checkouts}
    per_round: dict[str, list[tuple[float, float]]] = {name: [] for name in checkouts}
    load = os.getloadavg()[0]
    extra = args.rounds_long - args.rounds_short
    for _ in range(args.samples):
        for name, checkout in checkouts.items():
            long = _sample(checkout, args.rounds_long)
            short = _sample(checkout, args.rounds_short)
            per_round[name].append(
                ((long[0] - short[0]) * 1000 / extra, (long[1] - short[1]) * 1000 / extra)
            )
    samples = " | ".join(f"sample {i + 1}" for i in range(args.samples))
    print(f"| ms per Read + Edit round, CPU (wall) | {samples} | median |")
    print(f"| --- | {' | '.join('---:' for _ in range(args.samples))} | ---: |")
    for name, values in per_round.items():
        cells = " | ".join(f"{c:.2f} ({w:.2f})" for c, w in values)
        cpu = statistics.median(c for c, _ in values)
        wall = statistics.median(w for _, w in values)
        print(f"| {name} | {cells} | {cpu:.2f} ({wall:.2f}) |")
    print(f"\nload average {load:.1f} → {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
