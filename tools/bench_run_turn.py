#!/usr/bin/env python3
"""What one turn of ``lsp-agent run -p --output-format stream-json`` costs its process: the
whole per-turn path (the model client's request and streamed answer over HTTP, the agent loop,
a ``Read``, the stream-json lines), without start-up.

``run -p`` runs in this process (``lsp_agent.cli.main`` with its arguments; the lines go to
``/dev/null``) against the scripted Messages-API server in a separate process (its work is
not counted), once with ``--short`` Read turns and once with ``--turns``; the CPU time
(``time.process_time``) of the longer run minus the shorter one, divided by the difference in
turns, is one turn's cost.

``--baseline CHECKOUT`` runs another checkout's code in alternation with this one, each round
in fresh processes, so both see the same machine load.

Under ``valgrind --tool=callgrind --collect-atstart=no --toggle-collect=functools_reduce``,
``--once N`` runs one ``run -p`` of N turns inside ``functools.reduce``, so that only the run
is counted (not the imports before it): two such counts, at two values of N, give the
instructions per turn.

    python tools/bench_run_turn.py [--turns 60] [--short 10] [--rounds 3] [--baseline CHECKOUT]
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=functools_reduce \\
        python tools/bench_run_turn.py --once 45
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["run", "-p", "read it", "--output-format", "stream-json"]
ARGS += ["--permission-mode", "bypassPermissions"]


def _run(turns: int, *, in_reduce: bool = False) -> float:
    """One ``run -p`` of ``turns`` Read turns in this process; its CPU seconds."""
    sys.path.insert(0, str(ROOT / "tools"))
    import anthropic  # noqa: F401  (imported before the run: start-up, not a turn)
    from bench_turn_overhead import in_process_run, make_project, read_turns

    from lsp_agent.cli import main

    cwd = make_project()
    codes: list[int] = []
    with in_process_run(read_turns(turns), cwd):
        start = time.process_time()  # the server's start is not the turns' work
        if in_reduce:
            functools.reduce(lambda _a, _b: codes.append(main(ARGS)), [0, 0])
        else:
            codes.append(main(ARGS))
    if codes != [0]:
        raise RuntimeError(f"run -p failed: {codes}")
    return time.process_time() - start


def _sample(checkout: Path, turns: int) -> float:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(turns)],
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--short", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    parser.add_argument("--once", type=int, help="one run of N turns (for callgrind)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.once is not None:
        _run(args.once, in_reduce=True)
        return 0
    if args.child is not None:
        print(f"{_run(args.child):.6f}")
        return 0
    checkouts = {"this": ROOT}
    if args.baseline is not None:
        checkouts = {"baseline": args.baseline.resolve(), **checkouts}
    per_turn: dict[str, list[float]] = {name: [] for name in checkouts}
    load = os.getloadavg()[0]
    for _ in range(args.rounds):
        for name, checkout in checkouts.items():
            long = _sample(checkout, args.turns)
            short = _sample(checkout, args.short)
            per_turn[name].append((long - short) * 1000 / (args.turns - args.short))
    rounds = " | ".join(f"round {i + 1}" for i in range(args.rounds))
    print(f"| CPU ms per run -p turn | {rounds} | median |")
    print(f"| --- | {' | '.join('---:' for _ in range(args.rounds))} | ---: |")
    for name, values in per_turn.items():
        cells = " | ".join(f"{v:.2f}" for v in values)
        print(f"| {name} | {cells} | {statistics.median(values):.2f} |")
    print(f"\nload average {load:.1f} → {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
