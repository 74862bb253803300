#!/usr/bin/env python3
"""Agent overhead per turn, with a model that answers instantly.

A scenario of ``--turns`` model turns, each a ``Read`` of a small file, then a final answer,
is run three ways:

``core``
    In this process: a :class:`Session` on ``DiskHost`` with an in-memory model that replays
    the answers (no HTTP). The gap between two model calls is the agent's whole per-turn work:
    loop, tool validation, permission check, the Read itself, history and events.
``sdk``
    In this process, with the real model client (``anthropic`` SDK) talking HTTP to the
    scripted Messages-API server running as a separate process on 127.0.0.1: adds request
    building, JSON encoding of the growing history, SSE parsing.
``cli``
    ``lsp-agent run -p --output-format stream-json`` as a subprocess against the scripted
    server: the time between consecutive ``assistant`` events as they reach stdout is one whole
    turn (request, response, tool, bookkeeping), start-up excluded.

Goal: ≤ 10 ms per turn (Claude Code's gap between turns measures 45-70 ms with the bench
harness on the same kind of machine; see docs/performance.md). Prints a Markdown table;
``--json OUT`` also writes the figures.

``--baseline CHECKOUT`` compares the core mode's CPU time per turn with another checkout's
code instead: ``--rounds`` rounds, each a fresh process per checkout in alternation (so both
see the same machine load), each process the median of 5 runs after a warm-up.

    python tools/bench_turn_overhead.py [--turns 50] [--repeat 3] [--project DIR]
    python tools/bench_turn_overhead.py --baseline CHECKOUT [--rounds 4] [--turns 50]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

from lsp_agent.agent.env import AgentConfig
from lsp_agent.model.types import (
    AssistantResponse,
    ModelRequest,
    ModelStreamEvent,
    ResponseDone,
    TextBlock,
    TextDelta,
    ToolInputDelta,
    ToolUseBlock,
    ToolUseStart,
    Usage,
)
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.manager import SessionManager
from lsp_agent.testing.scenario import Scenario, reply, scenario, text, tool_use
from lsp_agent.workspace.disk_host import DiskHost

SMALL_FILE = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(20))


def read_turns(turns: int) -> Scenario:
    """``turns`` Read turns on ``{{cwd}}/small.py``, then a final text turn."""
    steps = [
        reply(text("Reading."), tool_use("Read", {"file_path": "{{cwd}}/small.py"}, id=f"t{i}"))
        for i in range(turns)
    ]
    steps.append(reply("Done."))
    return scenario(*steps, name=f"read_{turns}")


class ReplayModel:
    """A zero-latency model: streams prepared responses in order and notes when each call
    started (``time.perf_counter()`` seconds)."""

    def __init__(self, responses: Sequence[AssistantResponse]) -> None:
        self.responses = list(responses)
        self.calls: list[float] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        self.calls.append(time.perf_counter())
        response = self.responses[len(self.calls) - 1]
        for index, block in enumerate(response.content):
            if isinstance(block, TextBlock):
                yield TextDelta(index=index, text=block.text)
            elif isinstance(block, ToolUseBlock):
                yield ToolUseStart(index=index, id=block.id, name=block.name)
                yield ToolInputDelta(index=index, partial_json=json.dumps(block.input))
        yield ResponseDone(response=response)


def responses_for(turns: int, cwd: Path) -> list[AssistantResponse]:
    usage = Usage(input_tokens=100, output_tokens=10)
    out = [
        AssistantResponse(
            content=(
                TextBlock(text="Reading."),
                ToolUseBlock(id=f"t{i}", name="Read", input={"file_path": str(cwd / "small.py")}),
            ),
            stop_reason="tool_use",
            usage=usage,
        )
        for i in range(turns)
    ]
    out.append(
        AssistantResponse(content=(TextBlock(text="Done."),), stop_reason="end_turn", usage=usage)
    )
    return out


def make_project(folder: Path | None = None) -> Path:
    """The project the turns read: a new temporary folder, or ``folder`` (created if needed;
    its file is written only when missing or different, so a folder reused between runs
    stays unchanged, as a user's project does: see ``--project``)."""
    if folder is None:
        root = Path(tempfile.mkdtemp(prefix="lsp-agent-bench-")).resolve()
        (root / "small.py").write_text(SMALL_FILE)
        return root
    root = folder.resolve()
    root.mkdir(parents=True, exist_ok=True)
    small = root / "small.py"
    if not small.is_file() or small.read_text() != SMALL_FILE:
        small.write_text(SMALL_FILE)
    return root


async def run_core(turns: int, cwd: Path) -> dict[str, Any]:
    """One in-process run with :class:`ReplayModel`; per-turn gaps in ms, and the process's
    CPU time over the run (``cpu_ms``: less sensitive than wall time to a loaded machine,
    since waiting for a core is not counted)."""
    model = ReplayModel(responses_for(turns, cwd))
    manager = SessionManager(
        host=DiskHost(), model_factory=lambda: model, config=AgentConfig(model="replay")
    )
    session = manager.new(cwd=cwd)
    start, cpu = time.perf_counter(), time.process_time()
    result = await session.prompt([PromptText(text="read it many times")])
    total, cpu = time.perf_counter() - start, time.process_time() - cpu
    if result.stop_reason != "end_turn" or result.error:
        raise RuntimeError(f"the run failed: {result}")
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(model.calls)]
    return {"total_ms": total * 1000, "gaps_ms": gaps, "cpu_ms": cpu * 1000}


class ScriptedProcess:
    """The scripted Messages-API server as a subprocess (its CPU is not ours)."""

    def __init__(self, scen: Scenario, cwd: Path) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="lsp-agent-bench-srv-"))
        script = self.dir / "scenario.json"
        script.write_text(scen.model_dump_json())
        port_file = self.dir / "port"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lsp_agent.testing",
                "--scenario",
                str(script),
                "--port-file",
                str(port_file),
                "--var",
                f"cwd={cwd}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the scripted server did not start")
            time.sleep(0.02)
        self.base_url = f"http://127.0.0.1:{port_file.read_text().strip()}"

    def close(self) -> str:
        self.proc.terminate()
        _, err = self.proc.communicate(timeout=30)
        return err


@contextlib.contextmanager
def in_process_run(scen: Scenario, cwd: Path) -> Iterator[None]:
    """Inside: the setting for an in-process ``lsp_agent.cli.main(["run", "-p", ...])``
    against ``scen`` played by a :class:`ScriptedProcess` (environment variables set, ``cwd``
    the current folder, stdout to ``/dev/null``). On leaving, the server stops and ``cwd`` and
    the server's folder are removed."""
    server = ScriptedProcess(scen, cwd)
    os.environ.update(
        ANTHROPIC_BASE_URL=server.base_url,
        ANTHROPIC_API_KEY="bench",
        LSP_AGENT_MAX_RETRIES="0",
        LSP_AGENT_NO_DAEMON="1",
        LSP_AGENT_BACKGROUND_REQUESTS="0",
        HOME=str(cwd),
    )
    try:
        with (
            contextlib.chdir(cwd),
            open(os.devnull, "w") as sink,
            contextlib.redirect_stdout(sink),
        ):
            yield
    finally:
        server.close()
        shutil.rmtree(cwd, ignore_errors=True)
        shutil.rmtree(server.dir, ignore_errors=True)


async def run_sdk(turns: int, cwd: Path) -> dict[str, Any]:
    """One in-process run with the real SDK client against the scripted server process."""
    from lsp_agent.model.anthropic import AnthropicModel

    server = ScriptedProcess(read_turns(turns), cwd)
    calls: list[float] = []

    class Timed:
        def __init__(self) -> None:
            self.inner = AnthropicModel(api_key="bench", base_url=server.base_url, max_retries=0)

        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
            calls.append(time.perf_counter())
            async for event in self.inner.stream(request):
                yield event

    try:
        model = Timed()
        manager = SessionManager(
            host=DiskHost(), model_factory=lambda: model, config=AgentConfig(model="scripted")
        )
        session = manager.new(cwd=cwd)
        start = time.perf_counter()
        result = await session.prompt([PromptText(text="read it many times")])
        total = time.perf_counter() - start
        await model.inner.aclose()
    finally:
        err = server.close()
    if result.stop_reason != "end_turn" or result.error:
        raise RuntimeError(f"the run failed: {result}\n{err}")
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(calls)]
    return {"total_ms": total * 1000, "gaps_ms": gaps}


def run_cli(turns: int, cwd: Path) -> dict[str, Any]:
    """One ``lsp-agent run -p --output-format stream-json`` with ``turns`` Read turns: wall
    seconds, and the ms between consecutive ``assistant`` events as they reach stdout (one
    whole turn each: request, response, tool, bookkeeping)."""
    server = ScriptedProcess(read_turns(turns), cwd)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(
        ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="bench", LSP_AGENT_MAX_RETRIES="0"
    )
    stamps: list[float] = []
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lsp_agent",
                "run",
                "-p",
                "read it many times",
                "--output-format",
                "stream-json",
            ],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            if json.loads(line).get("type") == "assistant":
                stamps.append(time.perf_counter())
        code = proc.wait(timeout=600)
        elapsed = time.perf_counter() - start
    finally:
        server.close()
    if code != 0:
        raise RuntimeError(f"lsp-agent run failed ({code})")
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(stamps)]
    return {"wall_s": elapsed, "gaps_ms": gaps}


def stats(values: Sequence[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
        "min": ordered[0],
    }


def core_sample(turns: int, project: Path | None = None) -> float:
    """The median CPU ms per turn of 5 core runs in this process, after a warm-up."""
    cwd = make_project(project)
    asyncio.run(run_core(5, cwd))
    asyncio.run(run_core(turns, cwd))
    runs = [asyncio.run(run_core(turns, cwd)) for _ in range(5)]
    return float(statistics.median(run["cpu_ms"] / (turns + 1) for run in runs))


def compare(baseline: Path, *, rounds: int, turns: int, project: Path | None = None) -> int:
    """Core CPU per turn of ``baseline``'s code and this checkout's, alternating (Markdown)."""
    this = Path(__file__).resolve().parent.parent
    checkouts = {"baseline": baseline.resolve(), "this": this}
    samples: dict[str, list[float]] = {name: [] for name in checkouts}
    load = os.getloadavg()[0]
    for _ in range(rounds):
        for name, checkout in checkouts.items():
            env = {**os.environ, "PYTHONPATH": str(checkout)}
            extra = ["--project", str(project)] if project is not None else []
            out = subprocess.run(
                [sys.executable, __file__, "--core-sample", "--turns", str(turns), *extra],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            samples[name].append(float(out.stdout.strip().splitlines()[-1]))
    print(
        f"| CPU ms per core turn | {' | '.join(f'round {i + 1}' for i in range(rounds))} | median |"
    )
    print(f"| --- | {' | '.join('---:' for _ in range(rounds))} | ---: |")
    for name, values in samples.items():
        cells = " | ".join(f"{v:.2f}" for v in values)
        print(f"| {name} | {cells} | {statistics.median(values):.2f} |")
    ratio = statistics.median(samples["this"]) / statistics.median(samples["baseline"])
    print(f"\nthis / baseline: {ratio:.2f}; load average {load:.1f} → {os.getloadavg()[0]:.1f}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3, help="runs per mode")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--baseline", type=Path, help="compare core CPU with this checkout")
    parser.add_argument("--rounds", type=int, default=4, help="with --baseline")
    parser.add_argument(
        "--project",
        type=Path,
        help="the project folder (default: a new one in the temporary folder); reuse one whose "
        "parent folders do not change, as a user's project's do not: the memory check stats "
        "again, at every tool batch, what is missing in a folder that changed in the last 2 s",
    )
    parser.add_argument("--core-sample", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.core_sample:
        print(f"{core_sample(args.turns, args.project):.4f}")
        return 0
    if args.baseline is not None:
        return compare(args.baseline, rounds=args.rounds, turns=args.turns, project=args.project)
    cwd = make_project(args.project)
    figures: dict[str, Any] = {}

    asyncio.run(run_core(5, cwd))  # warm-up: imports, first-call caches
    core = [asyncio.run(run_core(args.turns, cwd)) for _ in range(args.repeat)]
    asyncio.run(run_sdk(2, cwd))  # warm-up: the SDK import (~0.7 s) is start-up, not a turn
    sdk = [asyncio.run(run_sdk(args.turns, cwd)) for _ in range(args.repeat)]
    for name, runs in (("core", core), ("sdk", sdk)):
        gaps = [g for run in runs for g in run["gaps_ms"]]
        per_turn = [run["total_ms"] / (args.turns + 1) for run in runs]
        figures[name] = {"gap_ms": stats(gaps), "total_per_turn_ms": stats(per_turn)}
    figures["core"]["cpu_per_turn_ms"] = stats([run["cpu_ms"] / (args.turns + 1) for run in core])

    run_cli(2, cwd)  # warm-up
    cli = [run_cli(args.turns, cwd) for _ in range(args.repeat)]
    figures["cli"] = {
        "gap_ms": stats([g for run in cli for g in run["gaps_ms"]]),
        "wall_s": stats([run["wall_s"] for run in cli]),
    }

    print(
        f"agent overhead per turn: {args.turns} Read turns + 1 final, {args.repeat} runs "
        f"per mode, zero model latency ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores)\n"
    )
    print("| mode | per-turn gap median ms | p95 ms | total / turns ms |")
    print("| --- | ---: | ---: | ---: |")
    for name in ("core", "sdk"):
        fig = figures[name]
        print(
            f"| {name} | {fig['gap_ms']['median']:.2f} | {fig['gap_ms']['p95']:.1f} | "
            f"{fig['total_per_turn_ms']['median']:.2f} |"
        )
    fig = figures["cli"]
    print(
        f"| cli (`run -p`, incl. the scripted server) | {fig['gap_ms']['median']:.1f} | "
        f"{fig['gap_ms']['p95']:.1f} | wall {fig['wall_s']['median']:.2f} s |"
    )
    print(
        f"\ncore: CPU time per turn (whole run / turns), median of the runs: "
        f"{figures['core']['cpu_per_turn_ms']['median']:.2f} ms; load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
