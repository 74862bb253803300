#!/usr/bin/env python3
"""Cold ``lsp-agent run -p`` to its first model request, against the SDK's own import time.

Interleaved in one run, round by round (order rotating):

``import anthropic``
    ``python -c "import anthropic"``: spawn → exit, the floor for any process that talks to
    the model through the SDK.
``run -p``
    ``lsp-agent run -p "Say hi." --output-format stream-json``: spawn → the first
    ``POST /v1/messages`` arriving at a minimal Messages-API stand-in served by this script on
    127.0.0.1 (it answers one text turn, so the run ends normally).
``python -c pass``
    interpreter start alone.
``run -p, baseline`` (with ``--baseline DIR``)
    the same cold ``run -p`` with another checkout's code first on ``PYTHONPATH`` (the
    code before a change), so before and after see the same load; with ``--daemon`` also
    through a second daemon running that code (in a runtime directory of its own).
``run -p via daemon`` (with ``--daemon``)
    the same command while a daemon started by ``lsp-agent daemon start`` runs (in a scratch
    runtime directory): the warm start.
``Claude Code -p`` (with ``--claude PATH``)
    ``claude -p "Say hi." --output-format stream-json --verbose`` with the same six tools and
    its non-essential traffic off, against the same stand-in: spawn → its first request.

Prints medians in ms (min-max) and, per round, run -p minus import anthropic (the time that is
the agent's own on that path). The goal: at most 150 ms.

    python tools/bench_cold_start.py [--rounds 15] [--bytecode env|cached] [--daemon]
        [--baseline OLD_CHECKOUT] [--claude PATH_TO_CLAUDE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_REPLY = [
    (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_bench",
                "type": "message",
                "role": "assistant",
                "model": "bench",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        },
    ),
    (
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
    ),
    ("message_stop", {"type": "message_stop"}),
]
_BODY = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in _REPLY).encode()


class _Arrivals:
    def __init__(self) -> None:
        self.times: list[float] = []
        self.lock = threading.Lock()


def _handler(arrivals: _Arrivals) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            with arrivals.lock:
                arrivals.times.append(time.perf_counter())
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(_BODY)))
            self.end_headers()
            self.wfile.write(_BODY)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument(
        "--bytecode",
        choices=["env", "cached"],
        default="cached",
        help="cached: bytecode kept in a scratch PYTHONPYCACHEPREFIX for every module (what a "
        "wheel install gets); env: the environment as it is",
    )
    parser.add_argument("--daemon", action="store_true", help="also time run -p via a daemon")
    parser.add_argument(
        "--baseline", type=Path, help="also time a cold run -p of this checkout's code"
    )
    parser.add_argument(
        "--claude", type=Path, help="also time Claude Code's -p (the path of its cli)"
    )
    args = parser.parse_args(argv)
    arrivals = _Arrivals()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(arrivals))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    work = Path(tempfile.mkdtemp(prefix="lsp-agent-cold-"))
    (work / "a.py").write_text("x = 1\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(
        ANTHROPIC_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}",
        ANTHROPIC_API_KEY="bench",
        HOME=str(work / "home"),
    )
    if args.bytecode == "cached":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    python = sys.executable
    agent = str(Path(python).with_name("lsp-agent"))
    run_p = [agent, "run", "-p", "Say hi.", "--output-format", "stream-json"]

    def spawn_to_exit(argv: list[str]) -> float:
        start = time.perf_counter()
        subprocess.run(argv, cwd=work, env=env, check=True, stdout=subprocess.DEVNULL)
        return (time.perf_counter() - start) * 1000

    (work / "run").mkdir(mode=0o700)
    env["XDG_RUNTIME_DIR"] = str(work / "run")
    daemon_env = dict(env)
    env["LSP_AGENT_NO_DAEMON"] = "1"

    def spawn_to_request(run_env: dict[str, str] = env) -> float:
        seen = len(arrivals.times)
        start = time.perf_counter()
        done = subprocess.run(run_p, cwd=work, env=run_env, capture_output=True, check=False)
        # The session-title request (background requests on, the user's default) may follow.
        if done.returncode != 0 or len(arrivals.times) <= seen:
            raise RuntimeError(f"run -p failed: {done.stderr.decode()[-2000:]}")
        return (arrivals.times[seen] - start) * 1000

    configs: dict[str, Callable[[], float]] = {
        "import anthropic": lambda: spawn_to_exit([python, "-c", "import anthropic"]),
        "run -p → first request": spawn_to_request,
        "python -c pass": lambda: spawn_to_exit([python, "-c", "pass"]),
    }
    if args.baseline is not None:
        baseline_env = dict(env, PYTHONPATH=str(args.baseline.resolve()))
        configs["run -p, baseline → first request"] = lambda: spawn_to_request(baseline_env)
    daemons = []
    if args.daemon:
        subprocess.run([agent, "daemon", "start"], env=daemon_env, check=True)
        daemons.append(daemon_env)
        configs["run -p via daemon → first request"] = lambda: spawn_to_request(daemon_env)
    if args.daemon and args.baseline is not None:
        (work / "run-baseline").mkdir(mode=0o700)
        old_daemon_env = dict(
            daemon_env,
            PYTHONPATH=str(args.baseline.resolve()),
            XDG_RUNTIME_DIR=str(work / "run-baseline"),
        )
        subprocess.run([agent, "daemon", "start"], env=old_daemon_env, check=True)
        daemons.append(old_daemon_env)
        configs["run -p via daemon, baseline → first request"] = lambda: spawn_to_request(
            old_daemon_env
        )
    if args.claude is not None:
        configs["Claude Code -p → first request"] = _claude_config(
            args.claude, env=env, work=work, arrivals=arrivals
        )
    times: dict[str, list[float]] = {name: [] for name in configs}
    names = list(configs)
    for r in range(args.warmup + args.rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            value = configs[name]()
            if r >= args.warmup:
                times[name].append(value)
    server.shutdown()
    for each in daemons:
        subprocess.run([agent, "daemon", "stop"], env=each, check=False)
    _report(times, args)


def _report(times: dict[str, list[float]], args: argparse.Namespace) -> None:
    load = os.getloadavg()[0]
    print(
        f"{args.rounds} rounds after {args.warmup} warm-up, interleaved; bytecode {args.bytecode}"
    )
    print(f"load average at the end {load:.1f}\n")
    print("| process | median ms | min-max ms |")
    print("|---|---|---|")
    for name, values in times.items():
        print(f"| {name} | {statistics.median(values):.0f} | {min(values):.0f}-{max(values):.0f} |")
    extra = [
        a - b
        for a, b in zip(times["run -p → first request"], times["import anthropic"], strict=True)
    ]
    if args.daemon:
        warm = times["run -p via daemon → first request"]
        ratios = [a / b for a, b in zip(warm, times["run -p → first request"], strict=True)]
        print(
            f"\nvia daemon / cold, per round: median {statistics.median(ratios):.2f} "
            f"({min(ratios):.2f} to {max(ratios):.2f})"
        )
    if args.daemon and args.baseline is not None:
        old = times["run -p via daemon, baseline → first request"]
        ratios = [a / b for a, b in zip(warm, old, strict=True)]
        print(
            f"via daemon / via daemon, baseline, per round: median {statistics.median(ratios):.2f} "
            f"({min(ratios):.2f} to {max(ratios):.2f})"
        )
    if args.claude is not None:
        claude = times["Claude Code -p → first request"]
        compared = {"run -p": times["run -p → first request"]}
        if args.daemon:
            compared["run -p via daemon"] = times["run -p via daemon → first request"]
        if args.daemon and args.baseline is not None:
            compared["run -p via daemon, baseline"] = old
        for name, values in compared.items():
            ratios = [a / b for a, b in zip(values, claude, strict=True)]
            print(
                f"\n{name} / Claude Code -p, per round: median {statistics.median(ratios):.2f} "
                f"({min(ratios):.2f} to {max(ratios):.2f})"
            )
    print(
        "\nrun -p → first request minus import anthropic, per round: median "
        f"{statistics.median(extra):.0f} ms ({min(extra):.0f} to {max(extra):.0f})"
    )
    if args.baseline is not None:
        old = times["run -p, baseline → first request"]
        ratios = [a / b for a, b in zip(times["run -p → first request"], old, strict=True)]
        extra_old = [a - b for a, b in zip(old, times["import anthropic"], strict=True)]
        print(
            f"baseline minus import anthropic, per round: median "
            f"{statistics.median(extra_old):.0f} ms; run -p / baseline, per round: median "
            f"{statistics.median(ratios):.2f} ({min(ratios):.2f} to {max(ratios):.2f})"
        )


def _claude_config(
    claude: Path, *, env: dict[str, str], work: Path, arrivals: _Arrivals
) -> Callable[[], float]:
    """Claude Code's ``-p`` with the same six tools and its non-essential traffic off:
    spawn → its first request at the stand-in (ms)."""
    claude_env = dict(
        env,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        IS_SANDBOX="1",
    )
    (work / "home").mkdir(exist_ok=True)
    argv = [str(claude), "-p", "Say hi.", "--output-format", "stream-json", "--verbose"]
    argv += ["--permission-mode", "bypassPermissions", "--tools", "Bash,Edit,Read,Write,Glob,Grep"]

    def to_request() -> float:
        seen = len(arrivals.times)
        start = time.perf_counter()
        subprocess.run(argv, cwd=work, env=claude_env, capture_output=True, check=False)
        if len(arrivals.times) <= seen:
            raise RuntimeError("Claude Code sent no request")
        return (arrivals.times[seen] - start) * 1000

    return to_request


if __name__ == "__main__":
    main()
