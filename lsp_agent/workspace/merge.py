"""Three-way merge of texts by lines: keep both sides' changes where they do not overlap.

``merge3(base, ours, theirs)`` takes the common ancestor and two descendants and returns the
merged text plus the hunks where both sides changed the same lines differently. Regions are
compared by whole lines (``str.splitlines(keepends=True)``), as diff3 and git do; changes that
touch or overlap in the base are one region, so an edit right next to another edit is a
conflict rather than a guess (git's rule) — unless the caller asks for ``adjacent="combine"``:
then only changes to the same base lines (or two insertions at one place) conflict, which is
what rebasing a pending edit onto the user's typing needs (the user typing on the line right
above the agent's change is the common case). A conflict is written into the text between
git-style markers (``<<<<<<<``, ``=======``, ``>>>>>>>``), which editors offer to resolve
(VS Code's merge-conflict actions, Neovim's conflict highlighting); no side's text is lost.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, kw_only=True)
class Conflict:
    """Both sides changed base lines ``[base_start, base_end)`` (0-based) differently.

    ``ours``/``theirs``/``base`` are the texts of that region on each side. ``start_line`` and
    ``end_line`` (0-based, end exclusive) locate the region in the merged text, markers
    included; ``theirs_start``/``theirs_end`` locate it in ``theirs`` (0-based, end exclusive).
    """

    base_start: int
    base_end: int
    base: str
    ours: str
    theirs: str
    start_line: int
    end_line: int
    theirs_start: int
    theirs_end: int


@dataclass(frozen=True, kw_only=True)
class MergeResult:
    """The merged text and its conflicts (empty when the merge is clean)."""

    text: str
    conflicts: tuple[Conflict, ...] = ()

    @property
    def clean(self) -> bool:
        """Whether no region needs the user's choice."""
        return not self.conflicts


@dataclass(frozen=True)
class _Hunk:
    start: int  # base lines [start, end) are replaced by side lines [side_start, side_end)
    end: int
    side_start: int
    side_end: int


def _hunks(base: list[str], side: list[str]) -> list[_Hunk]:
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return [
        _Hunk(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    ]


def _side_text(base: list[str], side: list[str], hunks: list[_Hunk], lo: int, hi: int) -> list[str]:
    """One side's lines for base region ``[lo, hi)``, given that side's hunks inside it."""
    out: list[str] = []
    at = lo
    for hunk in hunks:
        out.extend(base[at : hunk.start])
        out.extend(side[hunk.side_start : hunk.side_end])
        at = hunk.end
    out.extend(base[at:hi])
    return out


def _touch(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    return a_start <= b_end and b_start <= a_end


def _overlap(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    """Whether two base ranges share a line; an insertion (empty range) overlaps a range it
    falls strictly inside, or another insertion at the same place."""
    if a_start == a_end and b_start == b_end:
        return a_start == b_start
    if a_start == a_end:
        return b_start < a_start < b_end
    if b_start == b_end:
        return a_start < b_start < a_end
    return a_start < b_end and b_start < a_end


def _ensure_eol(lines: list[str], eol: str) -> list[str]:
    if lines and not lines[-1].endswith(("\n", "\r")):
        return [*lines[:-1], lines[-1] + eol]
    return lines


def merge3(
    base: str,
    ours: str,
    theirs: str,
    *,
    ours_label: str = "ours",
    theirs_label: str = "theirs",
    adjacent: Literal["conflict", "combine"] = "conflict",
) -> MergeResult:
    """Merge ``ours`` and ``theirs``, both descended from ``base``.

    Returns the merged text; where both changed overlapping or adjacent base lines to
    different text, the text holds both versions between conflict markers labelled
    ``ours_label``/``theirs_label`` and the result lists the :class:`Conflict`. Identical
    changes on both sides merge cleanly. Line endings are kept as each side wrote them;
    markers use the dominant ending of ``ours``. ``adjacent="combine"`` merges changes that
    only touch (see the module docstring). Pure: no I/O, never raises for any input.
    """
    joins = _touch if adjacent == "conflict" else _overlap
    if ours == theirs:
        return MergeResult(text=ours)
    if base == ours:
        return MergeResult(text=theirs)
    if base == theirs:
        return MergeResult(text=ours)
    b = base.splitlines(keepends=True)
    o = ours.splitlines(keepends=True)
    t = theirs.splitlines(keepends=True)
    eol = "\r\n" if ours.count("\r\n") * 2 > ours.count("\n") else "\n"
    tagged = sorted(
        [(h, 0) for h in _hunks(b, o)] + [(h, 1) for h in _hunks(b, t)],
        key=lambda item: (item[0].start, item[0].end),
    )
    out: list[str] = []
    conflicts: list[Conflict] = []
    at = 0
    shift = 0  # line index in theirs minus line index in base, before ``at``
    i = 0
    while i < len(tagged):
        lo, hi = tagged[i][0].start, tagged[i][0].end
        group = [tagged[i]]
        i += 1
        while i < len(tagged) and joins(lo, hi, tagged[i][0].start, tagged[i][0].end):
            hi = max(hi, tagged[i][0].end)
            group.append(tagged[i])
            i += 1
        out.extend(b[at:lo])
        at = hi
        mine = [h for h, side in group if side == 0]
        other = [h for h, side in group if side == 1]
        ours_part = _side_text(b, o, mine, lo, hi)
        theirs_part = _side_text(b, t, other, lo, hi)
        theirs_at = lo + shift
        shift += len(theirs_part) - (hi - lo)
        if not other or ours_part == theirs_part:
            out.extend(ours_part)
            continue
        if not mine:
            out.extend(theirs_part)
            continue
        start = len(out)
        out.append(f"<<<<<<< {ours_label}{eol}")
        out.extend(_ensure_eol(ours_part, eol))
        out.append(f"======={eol}")
        out.extend(_ensure_eol(theirs_part, eol))
        out.append(f">>>>>>> {theirs_label}{eol}")
        conflicts.append(
            Conflict(
                base_start=lo,
                base_end=hi,
                base="".join(b[lo:hi]),
                ours="".join(ours_part),
                theirs="".join(theirs_part),
                start_line=start,
                end_line=len(out),
                theirs_start=theirs_at,
                theirs_end=theirs_at + len(theirs_part),
            )
        )
    out.extend(b[at:])
    return MergeResult(text="".join(out), conflicts=tuple(conflicts))
