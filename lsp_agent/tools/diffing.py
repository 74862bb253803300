"""Unified diffs of whole-file changes, for permission prompts and tool call cards.

The diff is for reading, not for ``patch``: line breaks are shown as plain line ends whatever the
file uses (CRLF files do not show ``\\r``), and a missing final newline is marked the way
``diff -u`` does. The exact texts travel beside it in :class:`~lsp_agent.protocol.events.DiffItem`.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from lsp_agent.protocol.events import DiffItem
from lsp_agent.tools._text import to_lf

_NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(text: str) -> list[str]:
    """Lines with their ``\\n`` ends; only real line breaks split (not ``str.splitlines``'s
    form feeds and Unicode separators, which editors show inside a line)."""
    lines = [line + "\n" for line in to_lf(text).split("\n")]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    return lines


def unified_diff(old_text: str | None, new_text: str, *, label: str, context: int = 3) -> str:
    """The unified diff from ``old_text`` to ``new_text``.

    ``old_text`` ``None`` means a new file (``--- /dev/null``). ``label`` names the file in
    the ``---``/``+++`` headers. ``context`` is the number of unchanged lines around each hunk.
    Returns ``""`` when the texts have the same lines.
    """
    old_lines = _lines(old_text) if old_text is not None else []
    new_lines = _lines(new_text)
    out: list[str] = []
    for line in difflib.unified_diff(
        old_lines,
        new_lines,
        fromfile=label if old_text is not None else "/dev/null",
        tofile=label,
        n=context,
    ):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n")
            out.append(_NO_NEWLINE)
    return "".join(out)


def diff_item(path: Path, old_text: str | None, new_text: str, *, label: str) -> DiffItem:
    """A :class:`DiffItem` for ``path`` carrying the exact texts and their unified diff."""
    return DiffItem(
        path=str(path),
        old_text=old_text,
        new_text=new_text,
        unified_diff=unified_diff(old_text, new_text, label=label),
    )
