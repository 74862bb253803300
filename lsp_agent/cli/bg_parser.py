"""The parsers of the commands of the daemon (``daemon``) and of the background runs it holds
(``lsp-agent run -p --bg``): ``ps``, ``logs``, ``attach`` and ``kill``. Standard library only, like
:mod:`lsp_agent.cli.parser`."""

from __future__ import annotations

import argparse
from typing import Any

BACKGROUND_COMMANDS = ("ps", "logs", "attach", "kill")


def positive_int(text: str) -> int:
    """An integer above zero; raises ``argparse.ArgumentTypeError`` otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


_RUN_ID_HELP = "the run's id, or a prefix of it that only it has (see `lsp-agent ps`)"


def add_background_commands(commands: Any, *, run: argparse.ArgumentParser) -> None:
    """Add ``--bg`` to ``run``, and ``daemon``, ``ps``, ``logs``, ``attach`` and ``kill`` to
    ``commands`` (the subparsers action of the top-level parser)."""
    daemon = commands.add_parser(
        "daemon",
        help="start, stop or query the background process that gives `run -p` a warm start",
        description="A per-user background process (Unix socket, private to this user) that "
        "runs `lsp-agent run -p` invocations with everything already loaded. While it runs, "
        "`run -p` hands its whole invocation (arguments, directory, environment, stdin/stdout/"
        "stderr) to it and the result is the same as running in-process; with no daemon, or "
        "one that does not answer within a second, `run -p` runs in-process. Set "
        "LSP_AGENT_NO_DAEMON=1 to never use it.",
    )
    daemon.add_argument("action", choices=("start", "stop", "status", "serve"))
    daemon.add_argument(
        "--idle-timeout",
        type=positive_int,
        default=1800,
        metavar="S",
        help="exit after S seconds without a run (default 1800)",
    )

    run.add_argument(
        "--bg",
        action="store_true",
        help="run in the background daemon (started if none runs) and return at once, "
        "printing the run's id and session id; see `lsp-agent ps`, logs, attach, kill",
    )
    ps = commands.add_parser(
        "ps",
        help="list the background runs (`run -p --bg`)",
        description="The background runs of this user, newest first: running ones and those "
        "that ended in the last 7 days (at most the newest 50 ended runs are kept).",
    )
    ps.add_argument("--json", action="store_true", help="one JSON array of run records")

    logs = commands.add_parser(
        "logs",
        help="print what a background run wrote (stdout and stderr)",
        description="Print what a background run wrote so far: its stdout to stdout, its "
        "stderr to stderr, the bytes a foreground run would have printed.",
    )
    logs.add_argument("run_id", metavar="ID", help=_RUN_ID_HELP)
    logs.add_argument(
        "-f", "--follow", action="store_true", help="keep printing until the run ends"
    )

    attach = commands.add_parser(
        "attach",
        help="follow a background run until it ends and exit with its exit code",
        description="Print what a background run wrote and follow it until it ends, then "
        "exit with its exit code. Ctrl-C detaches (exit 130); the run goes on.",
    )
    attach.add_argument("run_id", metavar="ID", help=_RUN_ID_HELP)

    kill = commands.add_parser(
        "kill",
        help="end a background run",
        description="End a background run: SIGTERM to its process group, SIGKILL 5 seconds "
        "later if it is still there. Its state becomes killed.",
    )
    kill.add_argument("run_id", metavar="ID", help=_RUN_ID_HELP)
