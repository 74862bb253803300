#!/usr/bin/env python3
"""Verification latency after an edit, with real managed language servers.

A Python module of ``--lines`` lines is edited ``--runs`` times through the change-set
pipeline (``Workspace.apply`` over the disk, into the turn's journal), alternately introducing
and removing an undefined name, and each batch is verified exactly as a turn does it
(``TurnVerification``: the texts
the edit wrote are given to the managed servers, their reports for exactly those texts are
waited for, then classified). The figure is the time from the end of the edit to the verdict.
The first edit is reported apart: it includes the server's start and the report on the text
before the edit.

    python tools/bench_verification.py [--runs 50] [--lines 300] [--server ruff|basedpyright]

Prints a Markdown table; ``--json OUT`` also writes the figures. docs/performance.md
("Verification latency") records results.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsp_agent.diagnostics.config import DiagnosticsSettings, ManagedServerConfig, VerifyConfig
from lsp_agent.diagnostics.service import DiagnosticsService
from lsp_agent.diagnostics.turn import TurnVerification
from lsp_agent.protocol.documents import FileChange
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.textfile import read_text_file
from lsp_agent.workspace.workspace import Workspace


def _executable(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} not found: install the project's dev dependencies")
    return found


def server_config(name: str) -> ManagedServerConfig:
    """The managed server to measure."""
    if name == "ruff":
        return ManagedServerConfig(
            name="ruff",
            command=(_executable("ruff"), "server"),
            filetypes=("*.py",),
            language_id="python",
        )
    return ManagedServerConfig(
        name="basedpyright",
        command=(_executable("basedpyright-langserver"), "--stdio"),
        filetypes=("*.py",),
        language_id="python",
        settings={"basedpyright": {"analysis": {"typeCheckingMode": "standard"}}},
        start_timeout_ms=60_000,
    )


def module_text(lines: int) -> str:
    """A plausible module of about ``lines`` lines."""
    body = ["import math", "", ""]
    index = 0
    while len(body) < lines:
        body += [
            f"def area_{index}(radius: float) -> float:",
            f'    """Area number {index}."""',
            "    return math.pi * radius * radius",
            "",
            "",
        ]
        index += 1
    return "\n".join(body) + "\n"


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` percentile (nearest rank)."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(fraction * (len(ordered) - 1))))
    return ordered[rank]


async def measure(server: str, runs: int, lines: int) -> dict[str, Any]:
    """Run the benchmark; returns the figures in milliseconds."""
    root = Path(tempfile.mkdtemp(prefix="bench-verify-"))
    path = root / "module.py"
    clean = module_text(lines)
    broken = clean.replace(
        "return math.pi * radius * radius", "return math.pi * radius * radiuz", 1
    )
    path.write_text(clean)
    service = DiagnosticsService(
        settings=DiagnosticsSettings(servers=(server_config(server),)), roots=[root]
    )
    workspace = Workspace(host=DiskHost(), roots=(root,))
    config = VerifyConfig(timeout_ms=60_000)
    timings: list[float] = []
    first = 0.0
    verdict_errors: list[int] = []
    try:
        turn = TurnVerification.start(
            diagnostics=service,
            config=config,
            cwd=root,
            workspace=workspace,
            emit=lambda update: None,
        )
        assert turn is not None
        for run in range(runs + 1):
            base = read_text_file(path)
            new_text = broken if run % 2 == 0 else clean
            result = await workspace.apply(
                [FileChange(path=path, base=base, new_text=new_text)], label="bench"
            )
            assert result.applied, result.failure
            started = time.perf_counter()
            check = turn.begin()
            assert check is not None
            outcome = await check.run()
            elapsed = (time.perf_counter() - started) * 1000
            if not outcome.verdict.complete:
                raise SystemExit(f"run {run}: a source did not report: {outcome.attachment}")
            verdict_errors.append(outcome.verdict.new_errors)
            if run == 0:
                first = elapsed
            else:
                timings.append(elapsed)
    finally:
        await service.shutdown()
        shutil.rmtree(root, ignore_errors=True)
    expected = [1 if run % 2 == 0 else 0 for run in range(runs + 1)]
    if verdict_errors != expected:
        raise SystemExit(f"unexpected verdicts: {verdict_errors}")
    return {
        "server": server,
        "lines": lines,
        "runs": runs,
        "first_ms": round(first, 1),
        "median_ms": round(statistics.median(timings), 1),
        "p95_ms": round(percentile(timings, 0.95), 1),
        "min_ms": round(min(timings), 1),
        "max_ms": round(max(timings), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--server", choices=("ruff", "basedpyright"), action="append")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = [asyncio.run(measure(name, args.runs, args.lines)) for name in args.server or ["ruff"]]
    print("| server | file lines | runs | first edit ms | median ms | p95 ms | min ms | max ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(
            f"| {row['server']} | {row['lines']} | {row['runs']} | {row['first_ms']} | "
            f"{row['median_ms']} | {row['p95_ms']} | {row['min_ms']} | {row['max_ms']} |"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
