"""The parsers of the saved-session commands, ``lsp-agent rewind`` and ``lsp-agent sessions``
(list or remove saved sessions), kept beside :mod:`lsp_agent.cli.parser` so that module stays
small. Only :mod:`argparse` is imported."""

from __future__ import annotations

import argparse
from typing import Any


def add_rewind_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``rewind`` to ``commands`` (the ``add_subparsers`` object) and return its parser."""
    rewind: argparse.ArgumentParser = commands.add_parser(
        "rewind",
        help="go back to before one of a session's prompts: its files, its conversation, or both",
        description="Go back to before the prompt MESSAGE_ID of a session (its id from the "
        "list this command prints without --to, /rewind or lspAgent/session/checkpoints; a "
        "unique prefix of 6+ characters will do). code: the files the turns from that prompt "
        "on changed get their earlier content, keeping changes made since by three-way merge "
        "(conflict markers where they overlap; exit status 3); created files are removed, "
        "deleted ones come back; nothing else is touched. conversation: the session's "
        "transcript branches before the prompt, so --resume goes on without it (refused while "
        "the session is open in an editor: rewind it there). both: the two.",
    )
    rewind.add_argument(
        "--session",
        metavar="ID",
        help=(
            "the session's id, or 6+ characters of it (default: the newest saved session of "
            "the folder, as -c picks)"
        ),
    )
    rewind.add_argument(
        "--to",
        metavar="MESSAGE_ID",
        help="the prompt's id, or 6+ characters of it (without it: list the prompts)",
    )
    rewind.add_argument(
        "--restore",
        choices=("code", "conversation", "both"),
        default="code",
        help="what to restore: code, conversation or both (default: code)",
    )
    rewind.add_argument(
        "--cwd", default=".", metavar="DIR", help="the session's project folder (default: .)"
    )
    return rewind


def add_sessions_parser(commands: Any) -> argparse.ArgumentParser:
    """Add ``sessions`` to ``commands`` (the ``add_subparsers`` object) and return its parser."""
    sessions: argparse.ArgumentParser = commands.add_parser(
        "sessions",
        help="list the saved sessions of this folder (or remove one)",
        description="List the saved sessions of the folder, newest first: id, last update "
        "(local time), prompts, model and title; the id is what run -p --resume, rewind "
        "--session and the editors' session pickers take. `sessions rm ID` removes one saved "
        "session (its transcript; asks first, or --yes; refused while it is open in a running "
        "lsp-agent).",
    )
    sessions.add_argument(
        "action", nargs="?", choices=("list", "rm"), default="list", help="list (default) or rm"
    )
    sessions.add_argument(
        "session", nargs="?", metavar="ID", help="rm: the session id (or 6+ characters of it)"
    )
    sessions.add_argument("--json", action="store_true", help="print a JSON array")
    sessions.add_argument(
        "--all", dest="all_projects", action="store_true", help="every project, not only DIR"
    )
    sessions.add_argument("--yes", "-y", action="store_true", help="rm: do not ask")
    sessions.add_argument(
        "--cwd", default=".", metavar="DIR", help="the project folder (default: .)"
    )
    return sessions
