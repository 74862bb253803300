#!/usr/bin/env python3
"""CPU time of the model client per request, with the lean HTTP transport and with the SDK's
default one, in alternating rounds in one process (both see the same machine load).

Each request is a Read turn's request (system prompt, two tools, a short history) sent by
:class:`~lsp_agent.model.anthropic.AnthropicModel` through the real ``anthropic`` SDK to the
scripted Messages-API server, run as a separate process on 127.0.0.1 (its CPU is not counted);
the answer is a text block and a tool_use, streamed as server-sent events. Per round and
transport: ``--requests`` requests on one client after one warm-up request (the connection is
open and the SDK loaded); the figure is this process's CPU time (user + system) divided by the
requests. The collector's heap is frozen first (``gc.freeze``), so that a full collection of
the SDK's objects does not land in one round. Prints the median per transport and the
saving; ``LSP_AGENT_LEAN_HTTP`` (see :mod:`lsp_agent.model.lean_client`) picks the transport.

    python tools/bench_model_client.py [--requests 200] [--rounds 6]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.lean_client import LEAN_HTTP_ENV
from lsp_agent.model.types import Message, ModelRequest, ResponseDone, ToolSpec
from lsp_agent.testing.scenario import reply, scenario, text, tool_use

READ = ToolSpec(
    name="Read",
    description="Read a file.",
    input_schema={"type": "object", "properties": {"file_path": {"type": "string"}}},
)
BASH = ToolSpec(
    name="Bash",
    description="Run a shell command.",
    input_schema={"type": "object", "properties": {"command": {"type": "string"}}},
)


def request() -> ModelRequest:
    """A Read turn's request: a system prompt, two tools, a few messages."""
    messages = tuple(Message.user_text(f"line {i}: " + "x" * 200) for i in range(5))
    return ModelRequest(
        model="claude-sonnet-4-5",
        system=("You are a coding agent. " * 40,),
        messages=messages,
        tools=(READ, BASH),
    )


async def cpu_per_request(base_url: str, *, lean: bool, requests: int) -> float:
    """Microseconds of CPU per request over ``requests`` requests on one warmed client."""
    os.environ[LEAN_HTTP_ENV] = "1" if lean else "0"
    model = AnthropicModel(api_key="bench", base_url=base_url, max_retries=0)
    ask = request()
    start = time.process_time()
    try:
        for count in range(requests + 1):
            if count == 1:
                start = time.process_time()
            events = [event async for event in model.stream(ask)]
            if not isinstance(events[-1], ResponseDone):
                raise RuntimeError(f"the request failed: {events[-1]}")
        return (time.process_time() - start) / max(requests, 1) * 1e6
    finally:
        await model.aclose()


async def run(*, requests: int, rounds: int) -> dict[str, list[float]]:
    """CPU µs per request of each round, per transport (``"lean"``, ``"default"``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_turn_overhead import ScriptedProcess

    answers = [
        reply(text("Reading."), tool_use("Read", {"file_path": "small.py"}, id=f"t{i}"))
        for i in range(2 * rounds * (requests + 1) + 1)
    ]
    server = ScriptedProcess(scenario(*answers, name="bench"), Path(tempfile.gettempdir()))
    figures: dict[str, list[float]] = {"lean": [], "default": []}
    try:
        await cpu_per_request(server.base_url, lean=True, requests=0)  # SDK import, TLS context
        gc.freeze()
        for _ in range(rounds):
            for name in ("lean", "default"):
                figures[name].append(
                    await cpu_per_request(server.base_url, lean=name == "lean", requests=requests)
                )
    finally:
        server.close()
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per round")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    figures = asyncio.run(run(requests=args.requests, rounds=args.rounds))
    lean, default = (statistics.median(figures[name]) for name in ("lean", "default"))
    print(f"{args.rounds} rounds of {args.requests} requests per transport, alternating")
    print("| transport | CPU per request, median µs | rounds µs |")
    print("| --- | ---: | --- |")
    for name, value in (("default (httpcore2)", default), ("lean", lean)):
        rounds = ", ".join(f"{v:.0f}" for v in figures[name.split()[0]])
        print(f"| {name} | {value:.0f} | {rounds} |")
    print(f"\nsaving: {default - lean:.0f} µs per request ({(default - lean) / default:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
