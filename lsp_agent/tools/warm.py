"""Paying the search tools' one-time costs while the first model request is awaited.

A session's first Glob or Grep call used to pay, inside its turn, what every later search finds
done: starting this process's search sentinel (one ``vfork`` and ``exec`` of ``sh``, see
:mod:`lsp_agent.tools._leaf`; 0.3 ms, up to 3 ms on a busy machine), finding the ``rg``
executable (0.1-0.2 ms) and importing ``resource`` (the first ``os.wait4`` loads it for its
usage record). :func:`start_search_warm_up` does these on a thread of their own, started when
the first model request goes out (``run -p``) or once the language server has loaded the agent
core: the thread waits on ``vfork``, ``exec`` and the file system most of its time, so the
event loop building and sending the request barely notices it. Nothing here is needed: a call
that finds the work undone (or failed) does it itself and reports its own errors.
"""

from __future__ import annotations

import logging
import threading

from lsp_agent.tools._leaf import sentinel
from lsp_agent.tools._rg import find_rg

log = logging.getLogger(__name__)

SEARCH_TOOLS = frozenset({"Glob", "Grep"})
"""The tools whose first call the warm-up is for."""


def warm_search() -> None:
    """Start the search sentinel, find ``rg`` and import ``resource``, each at most once per
    process (later calls cost a lock and a cache look-up). Never raises: whatever fails here
    fails again, and is reported, in the tool call that needs it."""
    try:
        import resource  # noqa: F401  # os.wait4 imports it for the first reaped search

        sentinel().group()
        find_rg()
    except Exception:  # a missing rg is a ToolError at the call; anything else too
        log.debug("warming the search tools failed", exc_info=True)


def start_search_warm_up() -> threading.Thread:
    """Run :func:`warm_search` on a new daemon thread; returns the started thread (callers
    need not join it: a search call waits on the sentinel's lock if it is being started)."""
    thread = threading.Thread(target=warm_search, name="lsp-agent-warm-search", daemon=True)
    thread.start()
    return thread
