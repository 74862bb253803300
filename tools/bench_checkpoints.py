#!/usr/bin/env python3
"""What checkpoints cost on a large repository.

Generates a repository of ``--files`` files (default 10,000; ~1 KB of Python each, 100 per
folder, plus an ignored ``build/`` folder of 1,000 more and a ``.gitignore``), then drives the
real checkpoint recorder (:mod:`lsp_agent.checkpoints`) with its shadow git store and a disk
host through ``--turns`` turns (default 100). Each turn is what the executor reports for a
prompt that edits one file and runs one shell command that edits two files, creates one and
deletes one: ``start_turn``, ``before_apply``/``after_apply`` around the edit (the first
change of the turn snapshots the folder), ``before_shell``/``after_shell`` around the command
(two snapshots and a tree comparison).

Reported (Markdown; ``--json OUT`` writes the raw figures):

- the first snapshot into an empty store (every file read and hashed);
- the incremental snapshot before an edit's first change (only the edited file is read) and
  before a shell command (the folder's stat signatures compared): median, p90;
- the checkpoint work around one shell command (the snapshot before, the one after, the
  tree comparison and the saved checkpoint): median, p90;
- the first snapshot of a new process over an existing store (its saved stat cache);
- checkpoint work per turn (all five calls, the saved commit included): median, p90;
- disk used by the store: after the first snapshot, and added by the turns (per 100 turns);
- a code rewind of the last turn (plan + apply).

    python tools/bench_checkpoints.py [--files 10000] [--turns 100] [--json OUT]
    python tools/bench_checkpoints.py --baseline OLD_CHECKOUT [--compare-rounds 2] [--turns 30]

``--baseline`` runs this script against another checkout's code and this one in alternation
(``bench_interleave.py``) and prints both side by side with the machine's load.
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

from lsp_agent.checkpoints.objects import ShadowStore, store_path
from lsp_agent.checkpoints.recorder import Checkpoints
from lsp_agent.checkpoints.rewind import apply_rewind, checkpoints_from, plan_rewind
from lsp_agent.protocol.documents import FileChange
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.textfile import read_text_file


def generate(root: Path, files: int) -> list[Path]:
    """Write the repository; returns the tracked files."""
    out = []
    for i in range(files):
        folder = root / f"pkg{i // 1000}" / f"mod{(i // 100) % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"file_{i}.py"
        path.write_text("".join(f"def f_{i}_{k}(x):\n    return x + {k}\n\n" for k in range(30)))
        out.append(path)
    (root / ".gitignore").write_text("build/\n*.log\n")
    build = root / "build"
    build.mkdir()
    for i in range(files // 10):
        (build / f"out_{i}.o").write_bytes(b"\0" * 512)
    return out


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def p90(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.9) - 1]


async def run(files: int, turns: int, work: Path) -> dict[str, Any]:
    root = work / "repo"
    root.mkdir()
    tracked = generate(root, files)
    folder = store_path(work / "data" / "checkpoints", root)
    host = DiskHost()

    store = ShadowStore(path=folder, root=root)
    start = time.perf_counter()
    store.snapshot()
    store.save_index()
    first = time.perf_counter() - start
    disk_first = store.disk_bytes()

    names = ("start", "edit", "edited", "shell", "shelled")
    phases: dict[str, list[float]] = {k: [] for k in names}
    recorder = Checkpoints(session_id="bench", store=store, host=host)

    async def timed(phase: str, call: Any) -> None:
        t0 = time.perf_counter()
        await call
        phases[phase].append(time.perf_counter() - t0)

    for turn in range(turns):
        pick = turn * 37
        while not tracked[pick % len(tracked)].exists():  # deleted by an earlier turn
            pick += 1
        target = tracked[pick % len(tracked)]
        base = read_text_file(target)
        change = FileChange(path=target, base=base, new_text=base.text + f"# turn {turn}\n")
        await timed("start", recorder.start_turn(message_id=f"m{turn:04d}", prompt=f"turn {turn}"))
        await timed("edit", recorder.before_apply([change]))  # the turn's first change
        await host.apply_changes([change], label="Edit")
        await timed("edited", recorder.after_apply([target]))
        await timed("shell", recorder.before_shell())
        # The shell command: edits two files, creates one, deletes one.
        for k in (1, 2):
            victim = tracked[(turn * 53 + k) % len(tracked)]
            if victim.exists():
                victim.write_text(victim.read_text() + f"# shell {turn}\n")
        (root / f"pkg0/new_{turn}.py").write_text(f"NEW = {turn}\n")
        gone = tracked[(turn * 71 + 5) % len(tracked)]
        gone.unlink(missing_ok=True)
        await timed("shelled", recorder.after_shell())
        recorder.end_turn()
    per_turn = [sum(values) for values in zip(*phases.values(), strict=True)]
    per_shell = [a + b for a, b in zip(phases["shell"], phases["shelled"], strict=True)]
    disk_after = store.disk_bytes()

    restarted = ShadowStore(path=folder, root=root)
    start = time.perf_counter()
    restarted.snapshot()
    restart = time.perf_counter() - start

    saved = recorder.list()
    start = time.perf_counter()
    chosen = checkpoints_from(saved, saved[-1].message_id)
    targets, conflicts = plan_rewind(chosen, host=host, blobs=store.get)
    outcome = await apply_rewind(targets, conflicts, host=host)
    rewind = time.perf_counter() - start
    assert outcome.failure is None and not outcome.conflicts, outcome

    return {
        "files": files,
        "ignored_files": files // 10,
        "turns": turns,
        "first_snapshot_ms": ms(first),
        "edit_snapshot_ms_median": ms(statistics.median(phases["edit"])),
        "edit_snapshot_ms_p90": ms(p90(phases["edit"])),
        "shell_snapshot_ms_median": ms(statistics.median(phases["shell"])),
        "shell_snapshot_ms_p90": ms(p90(phases["shell"])),
        "shell_call_ms_median": ms(statistics.median(per_shell)),
        "shell_call_ms_p90": ms(p90(per_shell)),
        "restart_first_snapshot_ms": ms(restart),
        "checkpoint_ms_per_turn_median": ms(statistics.median(per_turn)),
        "checkpoint_ms_per_turn_p90": ms(p90(per_turn)),
        "store_bytes_after_first_snapshot": disk_first,
        "store_bytes_added_by_turns": disk_after - disk_first,
        "store_bytes_per_100_turns": round((disk_after - disk_first) * 100 / turns),
        "repository_bytes": sum(p.stat().st_size for p in root.rglob("*") if p.is_file()),
        "rewind_last_turn_ms": ms(rewind),
        "rewind_files": len(outcome.restored) + len(outcome.removed),
    }


def render(r: dict[str, Any]) -> str:
    mib = 1024 * 1024
    rows = [
        (
            "repository",
            f"{r['files']:,} files ({r['repository_bytes'] / mib:.1f} MiB), "
            f"{r['ignored_files']:,} ignored",
        ),
        ("first snapshot (empty store)", f"{r['first_snapshot_ms']:,} ms"),
        (
            "incremental snapshot before an edit's first change, median / p90",
            f"{r['edit_snapshot_ms_median']} ms / {r['edit_snapshot_ms_p90']} ms",
        ),
        (
            "incremental snapshot before a shell command, median / p90",
            f"{r['shell_snapshot_ms_median']} ms / {r['shell_snapshot_ms_p90']} ms",
        ),
        (
            "checkpoint work around one shell command (before + after), median / p90",
            f"{r['shell_call_ms_median']} ms / {r['shell_call_ms_p90']} ms",
        ),
        (
            "first snapshot of a new process (saved stat cache)",
            f"{r['restart_first_snapshot_ms']} ms",
        ),
        (
            "checkpoint work per turn (start, edit, shell command), median / p90",
            f"{r['checkpoint_ms_per_turn_median']} ms / {r['checkpoint_ms_per_turn_p90']} ms",
        ),
        (
            "store after the first snapshot",
            f"{r['store_bytes_after_first_snapshot'] / mib:.1f} MiB",
        ),
        (
            f"store growth over {r['turns']} turns (per 100 turns)",
            f"{r['store_bytes_added_by_turns'] / mib:.2f} MiB "
            f"({r['store_bytes_per_100_turns'] / mib:.2f} MiB)",
        ),
        (
            "code rewind of the last turn (plan + apply)",
            f"{r['rewind_last_turn_ms']} ms ({r['rewind_files']} files)",
        ),
    ]
    lines = ["| figure | value |", "| --- | --- |"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines)


KEYS = [
    ("first_snapshot_ms", "first snapshot (empty store), ms"),
    ("edit_snapshot_ms_median", "snapshot before an edit's first change, median ms"),
    ("edit_snapshot_ms_p90", "snapshot before an edit's first change, p90 ms"),
    ("shell_snapshot_ms_median", "snapshot before a shell command, median ms"),
    ("shell_call_ms_median", "checkpoint work around one shell command, median ms"),
    ("shell_call_ms_p90", "checkpoint work around one shell command, p90 ms"),
    ("checkpoint_ms_per_turn_median", "checkpoint work per turn, median ms"),
    ("checkpoint_ms_per_turn_p90", "checkpoint work per turn, p90 ms"),
    ("restart_first_snapshot_ms", "first snapshot of a new process, ms"),
    ("store_bytes_per_100_turns", "store growth per 100 turns, bytes"),
]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a checkout of other code: run both, interleaved, and compare",
    )
    parser.add_argument("--compare-rounds", type=int, default=2)
    args = parser.parse_args(argv)
    if args.baseline is not None:
        from bench_interleave import comparison, interleaved

        script_args = ["--files", str(args.files), "--turns", str(args.turns)]
        results = interleaved(
            Path(__file__), script_args, baseline=args.baseline, rounds=args.compare_rounds
        )
        print(comparison(results, KEYS))
        return 0
    work = Path(tempfile.mkdtemp(prefix="lsp-agent-bench-checkpoints-"))
    try:
        result = asyncio.run(run(args.files, args.turns, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(render(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
