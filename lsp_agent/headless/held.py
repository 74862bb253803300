"""Why ``run -p --resume``/``--continue`` cannot open a session a background run holds, and
what the user can do instead.

A session's transcript is locked by the process running it (:mod:`lsp_agent.store.transcript`).
When that process is a background run (``run -p --bg``), its record in the runs folder
(:mod:`lsp_agent.store.runs`) names the session, so the error can name the run, how to follow
it and the flag that continues the session under a new id.
"""

from __future__ import annotations

from collections.abc import Mapping

from lsp_agent.store.private import runs_dir
from lsp_agent.store.runs import RUN_ENV, running_sessions


def held_by_background_run(session_id: str, environ: Mapping[str, str]) -> str | None:
    """The error for a session a live background run of this user holds, else ``None`` (no
    such run, or the runs folder cannot be read). A background run never names itself."""
    try:
        run = running_sessions(runs_dir(environ)).get(session_id)
    except OSError:
        return None
    if run is None or run.id == environ.get(RUN_ENV):
        return None
    return (
        f"session {session_id} is in use by background run {run.id}: follow it with "
        f"`lsp-agent attach {run.id}` (or stop it with `lsp-agent kill {run.id}`), or add "
        "--fork-session to continue the session under a new id now"
    )
