"""``python -m lsp_agent.testing``: the scripted Messages-API server as a process.

``--scenario FILE_OR_NAME [--port 0] [--port-file F] [--var NAME=VALUE]...`` writes the bound
port to ``--port-file`` (atomically), or prints it once on stdout when that option is absent; on
SIGTERM/SIGINT prints a summary to stderr and exits 1 if any request failed or any step was left
unconsumed, else 0 (2 for a bad scenario or port).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from lsp_agent.testing.scenario import ScenarioError, load_scenario
from lsp_agent.testing.scripted import HOST, ScriptedServer, summary_problems


def _parse_vars(pairs: Sequence[str]) -> dict[str, str]:
    variables: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"--var {pair!r}: expected NAME=VALUE")
        variables[name] = value
    return variables


def _write_port_file(path: Path, port: int) -> None:
    # Write then rename, so a reader polling for the file never sees it half written.
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(str(port), encoding="utf-8")
    os.replace(tmp, path)


async def _serve(server: ScriptedServer, port_file: Path | None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # e.g. Windows
            loop.add_signal_handler(sig, stop.set)
    async with server:
        if port_file is not None:
            _write_port_file(port_file, server.port)
        else:
            print(server.port, flush=True)
        await stop.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server from the command line; returns the exit status (see module doc)."""
    parser = argparse.ArgumentParser(
        prog="python -m lsp_agent.testing",
        description="Scripted Messages-API server on 127.0.0.1 (tests and offline demo).",
    )
    parser.add_argument("--scenario", required=True, help="scenario JSON file or bundled name")
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: any free port)")
    parser.add_argument("--port-file", type=Path, help="write the bound port here")
    parser.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="value for {{NAME}} in the scenario (repeatable)",
    )
    args = parser.parse_args(argv)
    try:
        variables = _parse_vars(args.var)
        scenario = load_scenario(args.scenario)
    except (ValueError, ScenarioError) as exc:
        print(f"scripted server: {exc}", file=sys.stderr)
        return 2
    server = ScriptedServer(scenario=scenario, variables=variables, port=args.port)
    try:
        asyncio.run(_serve(server, args.port_file))
    except OSError as exc:
        print(f"scripted server: cannot listen on {HOST}:{args.port}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    problems = summary_problems(server.failures, server.unconsumed(), server.scenario)
    total = len(server.scenario.steps)
    played = total - len(server.unconsumed())
    print(
        f"scripted server: scenario {scenario.name!r}: {len(server.requests)} message requests, "
        f"{played}/{total} steps consumed, {len(server.failures)} failures",
        file=sys.stderr,
    )
    for line in problems:
        print(f"scripted server: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
