#!/usr/bin/env python3
"""The session store's costs: transcript append per turn, and ``session/load`` of a long
session to its first replayed update.

``append``
    A session's recorder writes turns as the loop commits them: the prompt, an assistant
    message with a ``Read`` call, its result (about 2 KB), the answer, and ``turn_end`` with the
    fsync. Reports the median and p95 per turn (ms), with fsync and without (the fsync is the
    durability cost; everything else is encoding and the history comparison).
``load``
    A generated transcript of N turns (same shape) is resumed by a fresh session manager, as
    ``lspAgent/session/load`` does: read and parse the file, follow the chain, rebuild the
    history, create the session, then the first replayed update; and the last. The replay is
    streamed when the code can (``resume(..., stream=True)``, what the LSP door asks for):
    the history is built while the updates go out. Goal: first update within 300 ms for
    1,000 turns. Also reported: transcript size per 100 turns.

    python tools/bench_sessions.py [--turns 1000] [--rounds 7] [--json OUT]
    python tools/bench_sessions.py --baseline OLD_CHECKOUT [--compare-rounds 3]

``--baseline`` runs this script against another checkout's code and this one in alternation
(``bench_interleave.py``) and prints both side by side with the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from lsp_agent.agent.env import AgentConfig
from lsp_agent.model.types import Message, TextBlock, ToolResultBlock, ToolUseBlock
from lsp_agent.protocol.documents import ApplyResult, FileChange, TextSnapshot
from lsp_agent.protocol.events import SessionUpdate
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.sessions.manager import SessionManager
from lsp_agent.sessions.recording import Recorder
from lsp_agent.sessions.resume import resume
from lsp_agent.store.paths import transcript_path
from lsp_agent.store.transcript import Transcript

RESULT = ("    def total(self, items):\n        return sum(i.price for i in items)\n" * 30)[:2000]
ANSWER = ("The total is computed by summing the prices; quantities are ignored. " * 8)[:500]


class NullHost:
    """A host that drops every update (the benchmark times the server side only)."""

    def buffer(self, path: Path) -> TextSnapshot | None:
        return None

    async def apply_changes(self, changes: Sequence[FileChange], *, label: str) -> ApplyResult:
        return ApplyResult(applied=False, failure="benchmark")

    async def request_permission(self, request: PermissionRequest) -> PermissionResponse:
        return PermissionResponse(outcome="cancelled")

    async def save_documents(self, paths: Sequence[Path]) -> None:
        return None

    async def files_changed_on_disk(self, paths: Sequence[Path]) -> None:
        return None

    def emit(self, session_id: str, update: SessionUpdate) -> None:
        return None


def turn_messages(i: int) -> list[Message]:
    use = ToolUseBlock(id=f"toolu_{i:05d}", name="Read", input={"file_path": f"/p/m{i}.py"})
    return [
        Message.user_text(f"question {i}: what does total() do in m{i}.py?"),
        Message(role="assistant", content=(TextBlock(text="Let me read it."), use)),
        Message(role="user", content=(ToolResultBlock(tool_use_id=use.id, content=RESULT),)),
        Message(role="assistant", content=(TextBlock(text=ANSWER),)),
    ]


def write_session(path: Path, session_id: str, turns: int, *, fsync: bool) -> list[float]:
    """Record ``turns`` turns as a session would; returns the ms spent per turn."""
    transcript = Transcript(path=path, session_id=session_id)
    recorder = Recorder(
        transcript=transcript, meta={"cwd": "/p", "roots": ["/p"], "model": "m", "mode": "default"}
    )
    history: list[Message] = []
    costs: list[float] = []
    for i in range(turns):
        messages = turn_messages(i)
        start = time.perf_counter()
        recorder.begin_turn(messages[0].text())
        for message in messages:
            history.append(message)
            recorder.sync(tuple(history), boundaries=(), summary="")
        if fsync:
            recorder.end_turn("end_turn")
        else:
            recorder._prompt = None
            transcript.append("turn_end", stopReason="end_turn")
        costs.append((time.perf_counter() - start) * 1000)
    recorder.close()
    return costs


def bench_append(turns: int) -> dict[str, float]:
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fsync in (True, False):
            path = Path(tmp) / f"append-{fsync}.jsonl"
            costs = write_session(path, "a", turns, fsync=fsync)
            costs.sort()
            tag = "fsync" if fsync else "nofsync"
            out[f"append_ms_{tag}_median"] = statistics.median(costs)
            out[f"append_ms_{tag}_p95"] = costs[int(len(costs) * 0.95) - 1]
            out["transcript_kib_per_100_turns"] = path.stat().st_size / turns * 100 / 1024
    return out


async def bench_load(turns: int, rounds: int) -> dict[str, float]:
    # Streamed when this tree's resume() can (the editor's session/load asks for it), with
    # the garbage collector paused around the replay as the door does, when it does.
    streamed = "stream" in inspect.signature(resume).parameters
    try:
        from lsp_agent.sessions.restore import collector_paused as paused
    except ImportError:
        paused = contextlib.nullcontext  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        cwd = Path(tmp) / "project"
        cwd.mkdir()
        session_id = "bench"
        path = transcript_path(data, cwd.resolve(), session_id)
        write_session(path, session_id, turns, fsync=False)
        # The transcript's meta names the project folder.
        text = path.read_text().replace('"cwd":"/p"', f'"cwd":"{cwd.resolve()}"', 1)
        path.write_text(text)
        first: list[float] = []
        whole: list[float] = []
        count = 0
        for _ in range(rounds):
            manager = SessionManager(
                host=NullHost(),
                model_factory=_NoModel,  # type: ignore[arg-type]
                config=AgentConfig(model="claude-test", data_dir=data),
                managed_memory=Path(tmp) / "none" / "CLAUDE.md",
            )
            start = time.perf_counter()
            resumed = (
                resume(manager, session_id, stream=True)
                if streamed
                else resume(manager, session_id)
            )
            with paused():
                updates = iter(resumed.updates)
                next(updates)
                first.append((time.perf_counter() - start) * 1000)
                count = 1 + sum(1 for _ in updates)
                whole.append((time.perf_counter() - start) * 1000)
            assert len(resumed.session.history) == turns * 4
            await manager.aclose()
        return {
            "load_turns": turns,
            "load_mb": path.stat().st_size / 1e6,
            "load_updates": count,
            "load_first_update_ms_median": statistics.median(first),
            "load_first_update_ms_min": min(first),
            "load_first_update_ms_max": max(first),
            "load_last_update_ms_median": statistics.median(whole),
        }


KEYS = [
    ("append_ms_fsync_median", "append per turn with the turn-end fsync, median ms"),
    ("append_ms_fsync_p95", "append per turn with the turn-end fsync, p95 ms"),
    ("append_ms_nofsync_median", "append per turn without fsync, median ms"),
    ("transcript_kib_per_100_turns", "transcript per 100 turns, KiB"),
    ("load_first_update_ms_median", "session/load: first replayed update, median ms"),
    ("load_first_update_ms_max", "session/load: first replayed update, max ms"),
    ("load_last_update_ms_median", "session/load: last replayed update, median ms"),
]


def render(r: dict[str, float]) -> str:
    return "\n".join(
        [
            f"append per turn (with fsync): median {r['append_ms_fsync_median']:.2f} ms, "
            f"p95 {r['append_ms_fsync_p95']:.2f} ms",
            f"append per turn (without fsync): median {r['append_ms_nofsync_median']:.2f} ms, "
            f"p95 {r['append_ms_nofsync_p95']:.2f} ms",
            f"transcript: {r['transcript_kib_per_100_turns']:.0f} KiB per 100 turns",
            f"session/load of {r['load_turns']:.0f} turns ({r['load_mb']:.1f} MB, "
            f"{r['load_updates']:.0f} updates): first replayed update median "
            f"{r['load_first_update_ms_median']:.0f} ms (min {r['load_first_update_ms_min']:.0f}, "
            f"max {r['load_first_update_ms_max']:.0f}); last update median "
            f"{r['load_last_update_ms_median']:.0f} ms",
        ]
    )


class _NoModel:
    async def aclose(self) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a checkout of other code: run both, interleaved, and compare",
    )
    parser.add_argument("--compare-rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    if args.baseline is not None:
        from bench_interleave import comparison, interleaved

        script_args = ["--turns", str(args.turns), "--rounds", str(args.rounds)]
        results = interleaved(
            Path(__file__), script_args, baseline=args.baseline, rounds=args.compare_rounds
        )
        print(comparison(results, KEYS))
        return
    result = bench_append(min(args.turns, 300)) | asyncio.run(bench_load(args.turns, args.rounds))
    print(render(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
