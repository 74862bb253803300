"""The files a search found: Grep and Glob results count as touched for on-demand memory.

Read, Edit and Write touch the file they name; a search touches the files it lists. When
``Glob`` or ``Grep`` lists ``src/api/handler.ts``, the model is about to work there, so
``src/api/CLAUDE.md`` and the rules whose ``paths:`` match ``handler.ts`` load after that
batch, as they would after a ``Read`` of it (Claude Code's on-demand rule, extended from the
tool's ``path`` to its results).

Bounded: only the first :data:`MAX_RESULT_PATHS` distinct files of a result count (results
list the most recently modified first, so these are the likeliest to be worked on), and at
most :data:`MAX_RESULT_LINES` lines are looked at. A line counts only when it starts with an
absolute path to an existing file: the whole line (Glob, Grep ``files_with_matches``) or the
part before a ``:`` (Grep ``content`` ``path:line:text`` and ``count`` ``path:n``); context
lines, notes and summaries are skipped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

RESULT_TOOLS: frozenset[str] = frozenset({"Grep", "Glob"})
"""Tools whose results list files that count as touched."""

MAX_RESULT_PATHS = 50
"""Distinct files of one result that count as touched (the first ones listed)."""

MAX_RESULT_LINES = 2_000
"""Lines of one result looked at, at most."""

ToolCallSeen = tuple[str, dict[str, object], str | None]
"""One finished tool call: its name, its input, and its result text (``None`` when it failed)."""


def _is_file(text: str) -> bool:
    try:
        return os.path.isfile(text)
    except (OSError, ValueError):
        return False


def line_path(line: str, *, checked: dict[str, bool] | None = None) -> Path | None:
    """The existing file a result line starts with (the text before one of its ``:``, or the
    whole line), or ``None``. ``checked`` remembers which strings name files, so the many
    lines of one file in a Grep result cost one ``stat``."""
    if not line or "\0" in line or not os.path.isabs(line.split(":", 1)[0] or line):
        return None
    known = {} if checked is None else checked
    start = 0
    while True:
        cut = line.find(":", start)
        candidate = line if cut < 0 else line[:cut]
        if candidate not in known:
            known[candidate] = _is_file(candidate)
        if known[candidate]:
            return Path(candidate)
        if cut < 0:
            return None
        start = cut + 1


def result_paths(text: str, *, limit: int = MAX_RESULT_PATHS) -> tuple[Path, ...]:
    """The distinct files ``text`` (a Grep or Glob result) lists, in its order, at most
    ``limit`` of them, from its first :data:`MAX_RESULT_LINES` lines."""
    found: dict[Path, None] = {}
    checked: dict[str, bool] = {}
    seen: tuple[str, ...] = ()  # "path:" of the files found: their next lines cost nothing
    for line in text.splitlines()[:MAX_RESULT_LINES]:
        if len(found) >= limit:
            break
        if seen and line.startswith(seen):
            continue
        path = line_path(line, checked=checked)
        if path is not None and path not in found:
            found[path] = None
            seen = (*seen, f"{path}:")
    return tuple(found)


def searched_paths(calls: Sequence[ToolCallSeen]) -> tuple[Path, ...]:
    """The files the successful Grep and Glob calls of ``calls`` listed (each call's first
    :data:`MAX_RESULT_PATHS`), without repeats."""
    found: dict[Path, None] = {}
    for name, _, output in calls:
        if name in RESULT_TOOLS and output is not None:
            found.update(dict.fromkeys(result_paths(output)))
    return tuple(found)
