"""Rebasing a proposed change onto newer text: the user kept typing while it waited.

A :class:`FileChange` names the text it was computed from. When the document holds other text
by the time the change is applied (or while its permission prompt is open), the change is
merged with the newer text (:func:`~lsp_agent.workspace.merge.merge3`, base = the change's
base, ours = the change, theirs = the text now, ``adjacent="combine"``): changes to other lines
are kept and the change still applies; changes to the same lines make it stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lsp_agent.protocol.documents import FileChange, TextSnapshot
from lsp_agent.workspace.merge import Conflict, merge3


@dataclass(frozen=True, kw_only=True)
class Rebase:
    """The result of :func:`rebase_change`.

    ``status``: ``"current"`` — the document still holds the change's base text (``change``
    is the original, its base renewed to the current version if that moved); ``"rebased"`` —
    the document changed elsewhere and ``change`` now applies on top of it; ``"stale"`` — the
    newer text overlaps the change (``change`` is ``None``, ``conflicts`` say where).
    """

    status: Literal["current", "rebased", "stale"]
    change: FileChange | None
    conflicts: tuple[Conflict, ...] = ()


def rebase_change(change: FileChange, current: TextSnapshot) -> Rebase:
    """Rebase ``change`` (computed from ``change.base``) onto ``current``, the document's text
    now. A change without a base (a new file) is returned as it is (``"current"``); whether it
    may be created is the door's business. Pure."""
    base = change.base
    if base is None:
        return Rebase(status="current", change=change)
    if current.text == base.text:
        if current == base:
            return Rebase(status="current", change=change)
        renewed = FileChange(path=change.path, base=current, new_text=change.new_text)
        return Rebase(status="current", change=renewed)
    merged = merge3(base.text, change.new_text, current.text, adjacent="combine")
    if not merged.clean:
        return Rebase(status="stale", change=None, conflicts=merged.conflicts)
    return Rebase(
        status="rebased",
        change=FileChange(path=change.path, base=current, new_text=merged.text),
    )


def describe_conflicts(conflicts: tuple[Conflict, ...]) -> str:
    """Where the newer text conflicts, in words: ``"line 4"``, ``"lines 4-6 and 10"``
    (1-based lines of ``theirs``; a region the newer text deleted names the line after it)."""
    spans = []
    for conflict in conflicts:
        first = conflict.theirs_start + 1
        last = max(conflict.theirs_end, first)
        spans.append(f"{first}" if first == last else f"{first}-{last}")
    word = "line" if len(spans) == 1 and "-" not in spans[0] else "lines"
    joined = spans[0] if len(spans) == 1 else ", ".join(spans[:-1]) + " and " + spans[-1]
    return f"{word} {joined}"
