#!/usr/bin/env python3
"""Start-up benchmark: process spawn → ``initialize`` response, lsp-agent vs a bare pygls server.

Both servers are started the same way (``sys.executable`` with the same flags) and measured in
the same run, alternating, so machine noise hits both alike. The bare server is a pygls
``LanguageServer`` with no features at all: the floor any pygls-based server pays. The goal is
lsp-agent ≤ 1.1 times bare pygls (the agent core and the model SDK are imported only after
``initialized``, in a background thread, so they must not show up here). lsp-agent is timed
twice: with no ``initializationOptions`` (as the bare server gets) and with what the VS Code
extension sends.

Bytecode: by default the child processes cache compiled modules in a temporary directory
(``PYTHONPYCACHEPREFIX``), filled by the warm-up runs, so every module of both servers loads
from bytecode as it does after ``pip install`` (which compiles it). ``--bytecode env`` keeps the
environment as it is; with ``PYTHONDONTWRITEBYTECODE=1`` and an editable install that means
lsp-agent's own modules are compiled from source at every start while pygls' come from the
bytecode pip wrote.

Also timed: ``lsp-agent --version`` (the CLI's own start-up) and, for scale, ``python -c pass``.

    python tools/bench_startup.py [--runs 20] [--bytecode cached|env] [--json OUT]

Prints a Markdown table (median, p95, min in ms) and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

BARE_PYGLS = (
    "from pygls.lsp.server import LanguageServer\nLanguageServer('bare-pygls', '0').start_io()\n"
)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"processId": None, "rootUri": None, "capabilities": {}},
}

VSCODE_OPTIONS = {
    "lspAgent": {
        "trusted": True,
        "permissionMode": "default",
        "logLevel": "warning",
        "clientCapabilities": {"saveDocuments": True, "reloadDocuments": True},
    }
}
"""``initializationOptions`` of the VS Code extension with its default settings."""


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _read_message(stream: Any) -> dict[str, Any]:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            raise RuntimeError("the server closed stdout before answering")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    result: dict[str, Any] = json.loads(stream.read(length))
    return result


def child_env(*, pycache: Path | None) -> dict[str, str]:
    """The environment of the timed processes: no ``ANTHROPIC_*``; with ``pycache``, bytecode
    written to and read from that directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def time_initialize(
    command: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    options: dict[str, Any] | None = None,
) -> float:
    """Seconds from spawning ``command`` to reading its ``initialize`` response (sent with
    ``options`` as ``initializationOptions``). The server is then shut down properly
    (``shutdown`` + ``exit``) outside the timed part."""
    request: dict[str, Any] = json.loads(json.dumps(INITIALIZE))
    if options is not None:
        request["params"]["initializationOptions"] = options
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_frame(request))
    proc.stdin.flush()
    while True:
        message = _read_message(proc.stdout)
        if message.get("id") == 1:
            break
    elapsed = time.perf_counter() - start
    if "result" not in message:
        raise RuntimeError(f"initialize failed: {message}")
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.flush()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return elapsed


def time_command(command: Sequence[str], *, cwd: Path, env: dict[str, str]) -> float:
    """Seconds from spawning ``command`` to its exit (it must exit 0)."""
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def summarize(seconds: Sequence[float]) -> dict[str, float]:
    """Median, p95 and min of ``seconds``, in milliseconds."""
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return {"median_ms": statistics.median(ms), "p95_ms": p95, "min_ms": ms[0], "runs": len(ms)}


def machine() -> dict[str, Any]:
    """Facts about this machine for the record."""
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()} {platform.machine()}",
        "date": time.strftime("%Y-%m-%d"),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?",
    }


BARE = "bare pygls: spawn → initialize"
SERVE = "lsp-agent serve: spawn → initialize"
SERVE_VSCODE = "lsp-agent serve, VS Code's initializationOptions: spawn → initialize"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs per command")
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs first")
    parser.add_argument(
        "--bytecode",
        choices=("cached", "env"),
        default="cached",
        help="cached: modules load from bytecode cached in a temporary directory (default); "
        "env: as the environment says (PYTHONDONTWRITEBYTECODE is honoured)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-startup-pycache-") as scratch:
        pycache = Path(scratch) if args.bytecode == "cached" else None
        return _run(args, env=child_env(pycache=pycache))


def _run(args: argparse.Namespace, *, env: dict[str, str]) -> int:
    cwd = Path(__file__).resolve().parent
    python = sys.executable
    cases: dict[str, Callable[[], float]] = {
        BARE: lambda: time_initialize([python, "-c", BARE_PYGLS], cwd=cwd, env=env),
        SERVE: lambda: time_initialize([python, "-m", "lsp_agent", "serve"], cwd=cwd, env=env),
        SERVE_VSCODE: lambda: time_initialize(
            [python, "-m", "lsp_agent", "serve"], cwd=cwd, env=env, options=VSCODE_OPTIONS
        ),
        "lsp-agent --version": lambda: time_command(
            [python, "-m", "lsp_agent", "--version"], cwd=cwd, env=env
        ),
        "python -c pass": lambda: time_command([python, "-c", "pass"], cwd=cwd, env=env),
    }
    for _ in range(args.warmup):
        for case in cases.values():
            case()
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, case in cases.items():  # interleaved: noise hits every case alike
            samples[name].append(case())
    figures = {name: summarize(values) for name, values in samples.items()}
    bare = figures[BARE]["median_ms"]
    ratio = figures[SERVE]["median_ms"] / bare
    ratio_vscode = figures[SERVE_VSCODE]["median_ms"] / bare
    facts = machine()
    print(
        f"start-up, {args.runs} runs each, bytecode {args.bytecode} ({facts['date']}; "
        f"{facts['cores']} cores, {facts['cpu']}; Python {facts['python']}; load average "
        f"{facts['load']})\n"
    )
    print("| command | median ms | p95 ms | min ms |")
    print("| --- | ---: | ---: | ---: |")
    for name, fig in figures.items():
        print(f"| {name} | {fig['median_ms']:.0f} | {fig['p95_ms']:.0f} | {fig['min_ms']:.0f} |")
    print(f"\nlsp-agent / bare pygls (medians): {ratio:.2f}x (goal ≤ 1.10x)")
    print(f"with VS Code's initializationOptions: {ratio_vscode:.2f}x")
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "machine": facts,
                    "bytecode": args.bytecode,
                    "figures": figures,
                    "ratio": ratio,
                    "ratio_vscode_options": ratio_vscode,
                },
                indent=2,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
