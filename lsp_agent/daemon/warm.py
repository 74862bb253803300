"""Keeping the daemon's warm state cheap to fork and true to each run's environment.

Two things make a forked run slower or different from a fresh process, and both are handled
here:

- **Copy-on-write after fork.** The daemon's preloaded heap (the SDK, pydantic, the agent:
  hundreds of thousands of objects) is shared with every child until a page is written. The
  cyclic garbage collector writes to every object it examines, so the child's first collection
  would copy most of that heap. :func:`freeze` moves what the daemon holds into the
  collector's permanent generation before the first fork (``gc.freeze``, as the Python
  documentation recommends for pre-fork servers), so children never examine it.
- **State that libraries computed from the daemon's environment at import.** A child takes on
  the client's environment (:func:`lsp_agent.daemon.server._become`); what was computed from
  the daemon's own environment before that is recomputed by :func:`adopt_environment`:
  ``tempfile``'s cached temporary directory (``TMPDIR``) and libgit2's configuration search
  paths and home directory (``HOME``, ``XDG_CONFIG_HOME``), which ``pygit2`` sets when it
  loads. Modules that read the environment at import and cannot be reset are not preloaded
  (see :mod:`lsp_agent.cli.preload`).
"""

from __future__ import annotations

import gc
import sys
import tempfile


def freeze() -> None:
    """Collect garbage, then move every object the process holds into the collector's
    permanent generation; call before the first fork, after the preload."""
    gc.collect()
    gc.freeze()


def adopt_environment() -> None:
    """In a forked child, after ``os.environ`` became the run's: drop what was computed from
    the daemon's environment, so it is computed again from the run's."""
    # gettempdir() caches its answer here; the daemon computed it with its own TMPDIR.
    tempfile.tempdir = None
    if "pygit2" in sys.modules:  # never imported here for this alone: it costs ~30 ms
        _reset_libgit2()


def _reset_libgit2() -> None:
    """libgit2's global and XDG configuration search paths and home directory as it would
    derive them from this process's environment (``GIT_OPT_SET_SEARCH_PATH`` and
    ``GIT_OPT_SET_HOMEDIR`` with no path reset them to their environment-derived defaults,
    per libgit2's ``git_libgit2_opts`` documentation). Its TLS certificate locations, also
    set at load, serve only network operations, which lsp-agent never asks of it."""
    from pygit2 import option
    from pygit2.enums import ConfigLevel, Option

    for level in (ConfigLevel.SYSTEM, ConfigLevel.XDG, ConfigLevel.GLOBAL):
        option(Option.SET_SEARCH_PATH, level, None)
    option(Option.SET_HOMEDIR, None)
