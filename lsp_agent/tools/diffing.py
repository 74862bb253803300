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
    lines = [line + "\n" for line in text.split("\n")]
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
    old = to_lf(old_text) if old_text is not None else ""
    new = to_lf(new_text)
    # The lines both texts start and end with can only be context: only the lines between
    # them, and ``context`` lines either side, are split and matched (an edit of a few lines
    # in a long file compares a few lines, not the whole file twice); ranges are shifted.
    # (Where equal lines repeat, the matcher may pair them differently than on the whole
    # texts: another diff of the same change, as valid.)
    head = _line_start(old, _common_prefix(old, new))
    tail = _common_suffix(old, new, limit=min(len(old), len(new)) - head)
    first = _back(old, head, context)
    a = _lines(old[first : _forward(old, len(old) - tail, context)])
    b = _lines(new[first : _forward(new, len(new) - tail, context)])
    lo = old.count("\n", 0, first)
    out: list[str] = []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(context):
        if not out:
            out.append(f"--- {label if old_text is not None else '/dev/null'}\n")
            out.append(f"+++ {label}\n")
        first_op, last_op = group[0], group[-1]
        old_range = _range(lo + first_op[1], lo + last_op[2])
        new_range = _range(lo + first_op[3], lo + last_op[4])
        out.append(f"@@ -{old_range} +{new_range} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                _emit(out, " ", a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                _emit(out, "-", a[i1:i2])
            if tag in ("replace", "insert"):
                _emit(out, "+", b[j1:j2])
    return "".join(out)


def _common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start (halving: each step is one
    comparison in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, *, limit: int) -> int:
    """How many characters (at most ``limit``) ``a`` and ``b`` share at their end, counted
    from the start of a line: the lines after the last changed one."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return 0
    i, j = len(a) - lo, len(b) - lo
    if (i == 0 or a[i - 1] == "\n") and (j == 0 or b[j - 1] == "\n"):
        return lo  # it starts a line in both
    # Else it begins after its first line break (at the same distance from the end in both
    # texts), or it is all one partial line: none.
    cut = a.find("\n", i)
    return 0 if cut < 0 else len(a) - cut - 1


def _line_start(text: str, index: int) -> int:
    """The offset where the line holding ``index`` starts."""
    return text.rfind("\n", 0, index) + 1


def _back(text: str, start: int, lines: int) -> int:
    """The start of the line ``lines`` lines before the one starting at ``start``."""
    for _ in range(lines):
        if start == 0:
            break
        start = text.rfind("\n", 0, start - 1) + 1
    return start


def _forward(text: str, end: int, lines: int) -> int:
    """The end of the ``lines`` lines after the one ending at ``end`` (line breaks
    included)."""
    for _ in range(lines):
        if end >= len(text):
            return len(text)
        nxt = text.find("\n", end)
        end = len(text) if nxt < 0 else nxt + 1
    return end


def _range(start: int, stop: int) -> str:
    """A hunk range as ``diff -u`` writes it (difflib's rule): ``first,count``, ``first``
    alone for one line, the line before for none."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _emit(out: list[str], sign: str, lines: list[str]) -> None:
    for line in lines:
        if line.endswith("\n"):
            out.append(sign + line)
        else:
            out.append(sign + line + "\n")
            out.append(_NO_NEWLINE)


def diff_item(path: Path, old_text: str | None, new_text: str, *, label: str) -> DiffItem:
    """A :class:`DiffItem` for ``path`` carrying the exact texts and their unified diff."""
    return DiffItem(
        path=str(path),
        old_text=old_text,
        new_text=new_text,
        unified_diff=unified_diff(old_text, new_text, label=label),
    )
