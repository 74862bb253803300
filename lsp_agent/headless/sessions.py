"""``lsp-agent sessions``: the saved sessions, listed and removed without an editor.

The list comes from the session index (:func:`lsp_agent.store.index.list_sessions`): the
project of ``--cwd`` by default, every project with ``--all``; newest first. ``--json``
prints one JSON array for scripts. ``sessions rm ID`` deletes one saved session's transcript
(``ID`` or a unique prefix of 6+ characters among the listed sessions) after asking on a
terminal, or with ``--yes``; a session open in a running lsp-agent (its transcript is locked)
is refused, and checkpoints stay in the shadow store until its retention collects them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TextIO

from lsp_agent.headless.terminal import plain
from lsp_agent.store.ids import MIN_PREFIX, AmbiguousIdError, IdLookupError, resolve_id
from lsp_agent.store.index import SessionInfo, list_sessions
from lsp_agent.store.paths import data_dir

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


@dataclass(frozen=True, kw_only=True)
class SessionsOptions:
    """``action`` ``list`` or ``rm``; ``session_id`` (``rm``); ``as_json``, ``all_projects``
    and ``yes`` are the flags; ``cwd`` the project folder."""

    action: str
    session_id: str | None
    as_json: bool
    all_projects: bool
    yes: bool
    cwd: Path


class _SessionsError(Exception):
    """The command cannot be done; nothing was changed. The message says why."""


def run_sessions(
    options: SessionsOptions,
    *,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    stdin: TextIO = sys.stdin,
) -> int:
    """List or remove saved sessions; returns the exit status (0 done, 1 failed or declined
    with nothing changed, 2 usage error)."""
    root = options.cwd.resolve()
    try:
        saved = list_sessions(data_dir(), cwd=None if options.all_projects else root)
    except OSError as exc:
        print(f"lsp-agent: error: cannot list the saved sessions: {exc}", file=err)
        return EXIT_FAILED
    if options.action == "list":
        _list(saved, options=options, root=root, out=out, err=err)
        return EXIT_OK
    try:
        return _remove(saved, options=options, out=out, err=err, stdin=stdin)
    except _SessionsError as exc:
        print(f"lsp-agent: error: {exc}", file=err)
        return EXIT_FAILED


def as_json(info: SessionInfo, background_run: str | None = None) -> dict[str, object]:
    """The JSON object of one listed session (``created``/``updated`` ISO 8601 UTC,
    ``turns`` the user's prompts; ``background_run`` the id of the background run running it
    now, else ``None``)."""
    return {
        "session_id": info.session_id,
        "title": info.title,
        "created": info.created,
        "updated": info.updated,
        "turns": info.turns,
        "model": info.model,
        "mode": info.mode,
        "cwd": info.cwd,
        "interrupted": info.interrupted,
        "background_run": background_run,
    }


def _background_runs() -> dict[str, str]:
    """Session id → id of the background run of this user running it now."""
    from lsp_agent.store.private import runs_dir
    from lsp_agent.store.runs import running_sessions

    try:
        return {s: r.id for s, r in running_sessions(runs_dir(os.environ)).items()}
    except OSError:
        return {}


def _list(
    saved: list[SessionInfo], *, options: SessionsOptions, root: Path, out: TextIO, err: TextIO
) -> None:
    running = _background_runs()
    if options.as_json:
        data = [as_json(info, running.get(info.session_id)) for info in saved]
        print(json.dumps(data, ensure_ascii=False), file=out)
        return
    if not saved:
        where = "any project" if options.all_projects else str(root)
        print(f"no saved session in {where}", file=err)
        return
    rows: list[tuple[str, ...]] = []
    for info in saved:
        run = running.get(info.session_id)
        # A session a background run is still running reads like one that was cut off.
        mark = f"  (background run {run})" if run else ""
        mark = mark or ("  (interrupted)" if info.interrupted else "")  # a killed run, Ctrl-C
        folder = (plain(info.cwd, one_line=True),) if options.all_projects else ()
        rows.append(
            (
                info.session_id,
                _local_time(info.updated),
                f"{info.turns} turn{'' if info.turns == 1 else 's'}",
                plain(info.model or "-", one_line=True),
                *folder,
                f"{plain(info.title, one_line=True)}{mark}",
            )
        )
    header = (
        "SESSION",
        "UPDATED",
        "TURNS",
        "MODEL",
        *(("FOLDER",) if options.all_projects else ()),
    )
    # Columns padded to their widest cell (as ps does); the title, last, is not.
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [(*header, "TITLE"), *rows]:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[-1]]), file=out)


def _local_time(stamp: str) -> str:
    """``stamp`` (ISO 8601) in the local time zone to the minute, or as given if unreadable."""
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp or "-"


def _remove(
    saved: list[SessionInfo], *, options: SessionsOptions, out: TextIO, err: TextIO, stdin: TextIO
) -> int:
    wanted = options.session_id or ""
    if not wanted:
        print(
            f"lsp-agent: error: sessions rm needs a session id (or {MIN_PREFIX}+ characters of "
            "one) from `lsp-agent sessions`",
            file=err,
        )
        return EXIT_USAGE
    where = "any project" if options.all_projects else str(options.cwd.resolve())
    try:
        found = resolve_id(
            [i.session_id for i in saved], wanted, what="saved session", where=f" in {where}"
        )
    except AmbiguousIdError as exc:
        raise _SessionsError(str(exc)) from None
    except IdLookupError as exc:
        raise _SessionsError(f"{exc} (--all: every project)") from None
    info = next(i for i in saved if i.session_id == found)
    if not options.yes:
        if not stdin.isatty():
            raise _SessionsError("nothing removed: confirm with --yes (no terminal to ask on)")
        title = plain(info.title, one_line=True)
        print(f"Remove session {info.session_id} ({title})? [y/N] ", end="", file=err)
        err.flush()
        if stdin.readline().strip().lower() not in ("y", "yes"):
            print("nothing removed", file=err)
            return EXIT_FAILED
    _delete(Path(info.path))
    print(f"removed session {info.session_id} ({plain(info.title, one_line=True)})", file=out)
    return EXIT_OK


def _delete(path: Path) -> None:
    """Delete the transcript ``path`` unless a running lsp-agent holds it open (locked)."""
    try:
        file = path.open("ab")
    except OSError as exc:
        raise _SessionsError(f"cannot remove {path}: {exc.strerror or exc}") from None
    with file:
        if fcntl is not None:
            try:
                fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise _SessionsError(
                    "the session is open in a running lsp-agent (an editor or a run): close "
                    "it there first"
                ) from None
        try:
            path.unlink()
        except OSError as exc:
            raise _SessionsError(f"cannot remove {path}: {exc.strerror or exc}") from None
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # the project's folder, when this was its last session
