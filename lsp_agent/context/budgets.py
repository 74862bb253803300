"""Tool-result budgets: an oversized result is saved to a file and the model gets a preview.

Limits follow Claude Code's tools reference: Bash output is kept inline up to 30,000
characters (``BASH_MAX_OUTPUT_LENGTH``, at most 150,000); above that the whole output is saved
under the session's folder (``tool-results/``) and the model receives the head and the tail
plus the saved file's path, which it can Read with offset/limit. A failing command keeps a
10,000-character head-and-tail excerpt so the error at its end is never lost. Other tools get
:data:`DEFAULT_BUDGET_CHARS` (about 10,000 tokens). ``Read`` is exempt: it pages by itself
(offset/limit), and spilling its answer into a file the model would Read again is a loop.

:func:`fit` is pure; :func:`spill` writes the file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

BASH_BUDGET_CHARS = 30_000
"""Bash output kept inline (characters), Claude Code's ``BASH_MAX_OUTPUT_LENGTH`` default."""

BASH_BUDGET_MAX_CHARS = 150_000
"""The largest value ``BASH_MAX_OUTPUT_LENGTH`` may raise the Bash budget to."""

ERROR_EXCERPT_CHARS = 10_000
"""Head-and-tail excerpt kept of a failing command's oversized output (characters)."""

DEFAULT_BUDGET_CHARS = 40_000
"""Budget of tools without their own (characters, about 10,000 tokens)."""

EXEMPT_TOOLS = frozenset({"Read"})
"""Tools whose results are never spilled (they page by themselves)."""

TOOL_RESULTS_DIR = "tool-results"
"""Folder, inside the session's folder, holding spilled results."""


def budget_for(tool: str, environ: Mapping[str, str] | None = None) -> int | None:
    """The inline budget of ``tool`` in characters, or ``None`` when it is exempt.

    ``BASH_MAX_OUTPUT_LENGTH`` in ``environ`` (a positive integer) sets the Bash budget, capped
    at :data:`BASH_BUDGET_MAX_CHARS`; other values are ignored.
    """
    if tool in EXEMPT_TOOLS:
        return None
    if tool == "Bash":
        raw = (environ or {}).get("BASH_MAX_OUTPUT_LENGTH", "")
        if raw.isdigit() and int(raw) > 0:
            return min(int(raw), BASH_BUDGET_MAX_CHARS)
        return BASH_BUDGET_CHARS
    return DEFAULT_BUDGET_CHARS


def head_tail(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters: the first and last halves, with a line
    naming how many characters were left out between them. Shorter text is returned as is."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    dropped = len(text) - head - tail
    return f"{text[:head]}\n\n... [{dropped} characters omitted] ...\n\n{text[-tail:]}"


@dataclass(frozen=True, kw_only=True)
class Fitted:
    """A result after its budget: ``text`` for the model, and ``spilled`` when the full text
    must be saved to ``path`` first."""

    text: str
    spilled: bool = False


def fit(text: str, *, budget: int | None, is_error: bool, path: Path) -> Fitted:
    """Fit a tool result of ``len(text)`` characters into ``budget`` characters.

    Within budget (or exempt, ``budget`` None): unchanged. Over it: a preview of the head and
    tail (``budget`` characters in all; :data:`ERROR_EXCERPT_CHARS` for a failing result, so
    both the command and its final error show) and the path where the full text will be saved.
    """
    if budget is None or len(text) <= budget:
        return Fitted(text=text)
    keep = min(budget, ERROR_EXCERPT_CHARS) if is_error else budget
    lines = text.count("\n") + 1
    preview = head_tail(text, keep)
    note = (
        f"<persisted-output>\nOutput too large ({len(text)} characters, {lines} lines). "
        f"The full output is saved to {path}; Read it with offset and limit, or Grep it, "
        f"for the part you need.\n\nPreview (head and tail):\n{preview}\n</persisted-output>"
    )
    return Fitted(text=note, spilled=True)


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def result_path(session_dir: Path, tool_use_id: str) -> Path:
    """Where the full result of call ``tool_use_id`` is saved (a safe file name)."""
    name = _UNSAFE.sub("_", tool_use_id)[:120] or "result"
    return session_dir / TOOL_RESULTS_DIR / f"{name}.txt"


def spill(path: Path, text: str) -> None:
    """Save ``text`` to ``path`` (UTF-8, private to the user; folders created as needed).

    Raises ``OSError`` when the file cannot be written; callers keep the preview-less text then.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(text)
    os.replace(tmp, path)
