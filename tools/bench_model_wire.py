#!/usr/bin/env python3
"""CPU per model request over HTTP: the model client's own cost, from building the request to
the last event of the streamed answer.

A session of ``--requests`` requests is replayed through :class:`AnthropicModel` (the real
``anthropic`` SDK, HTTP on 127.0.0.1) against the scripted Messages-API server, which runs as a
separate process so its work is not counted. The history grows as in a coding session: each
answer is a sentence and a tool call (streamed in 20-character pieces), each result 2 KB of
file text, so the last request carries ≈ 130 KB. What is timed is this process's CPU
(``time.process_time``) per request: request building and encoding, the SDK's request path,
HTTP, event decoding and accumulation.

``--baseline CHECKOUT`` runs another checkout's code in alternation with this one, each round
in fresh processes, so both see the same machine load; the figures are medians over the
rounds of each process's median (rounds after the first request of a process only).

    python tools/bench_model_wire.py [--requests 60] [--rounds 3] [--baseline CHECKOUT]
        [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_RESULT_BYTES = 2048
_SYSTEM = ("You are a coding agent. " * 40, "Working directory: /home/dev/project")


def _scenario(requests: int) -> dict[str, Any]:
    steps = []
    for n in range(requests):
        content: list[dict[str, Any]] = [
            {"type": "text", "text": f"Step {n}: reading the next module to check its logic."}
        ]
        if n < requests - 1:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{n:04d}",
                    "name": "Read",
                    "input": {"file_path": f"/home/dev/project/src/module_{n:03d}.py"},
                }
            )
        steps.append({"response": {"content": content}})
    return {"name": "wire", "description": "model-client benchmark", "steps": steps}


async def _child(requests: int, port: int) -> list[float]:
    from lsp_agent.model.anthropic import AnthropicModel
    from lsp_agent.model.types import (
        Message,
        ModelRequest,
        ResponseDone,
        TextBlock,
        ToolResultBlock,
        ToolSpec,
    )

    tools = tuple(
        ToolSpec(
            name=name,
            description=f"The {name} tool. " * 30,
            input_schema={
                "type": "object",
                "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["file_path"],
            },
        )
        for name in ("Read", "Edit", "Write", "Glob", "Grep", "Bash")
    )
    model = AnthropicModel(api_key="bench", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    history: tuple[Message, ...] = (Message.user_text("Fix the failing test."),)
    cpu: list[float] = []
    line = "    value = compute(value)  # a line of source text, about sixty bytes\n"
    body = (line * (_RESULT_BYTES // len(line) + 1))[:_RESULT_BYTES]
    try:
        for _ in range(requests):
            request = ModelRequest(
                model="claude-bench", system=_SYSTEM, messages=history, tools=tools
            )
            start = time.process_time()
            response = None
            async for event in model.stream(request):
                if isinstance(event, ResponseDone):
                    response = event.response
            cpu.append((time.process_time() - start) * 1000)
            assert response is not None
            message = response.message()
            results = tuple(
                ToolResultBlock(tool_use_id=use.id, content=body) for use in message.tool_uses()
            )
            history = (
                *history,
                message,
                Message(role="user", content=results or (TextBlock(text="go on"),)),
            )
    finally:
        await model.aclose()
    return cpu


def _run_child(checkout: Path, requests: int, scenario_file: Path) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    server = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent.testing", "--scenario", str(scenario_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(requests), "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        server.terminate()
        server.wait()
    return [float(x) for x in json.loads(out.stdout)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(asyncio.run(_child(args.child, args.port))))
        return 0
    checkouts = {"this": ROOT}
    if args.baseline is not None:
        checkouts = {"baseline": args.baseline.resolve(), **checkouts}
    figures: dict[str, dict[str, list[float]]] = {name: {} for name in checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        scenario_file = Path(tmp) / "wire.json"
        scenario_file.write_text(json.dumps(_scenario(args.requests)), encoding="utf-8")
        for _ in range(args.rounds):
            for name, checkout in checkouts.items():
                cpu = _run_child(checkout, args.requests, scenario_file)[1:]
                tenth = max(1, len(cpu) // 10)
                for key, values in (
                    ("median", cpu),
                    ("first 10%", cpu[:tenth]),
                    ("last 10%", cpu[-tenth:]),
                ):
                    figures[name].setdefault(key, []).append(statistics.median(values))
    print("| code | CPU ms per request, median | first 10 % of requests | last 10 % |")
    print("| --- | ---: | ---: | ---: |")
    for name, keys in figures.items():
        cells = " | ".join(f"{statistics.median(keys[k]):.2f}" for k in keys)
        print(f"| {name} | {cells} |")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
