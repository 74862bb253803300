"""Classifying diagnostics after an edit: new, fixed or pre-existing.

A diagnostic after the edit is *pre-existing* when one with the same source, code and message
existed before and it is "the same place", tried in this order:

1. its line is where the old diagnostic's line moved to (lines are mapped through a line diff
   of the old and new text, so edits above it shift it without making it new);
2. the code on its line is the same as the code on the old line (the line moved further, e.g.
   a function was moved);
3. the old line was rewritten by the edit and the new diagnostic lies in the rewritten region.

Every other diagnostic after the edit is *new*; every old one left unmatched is *fixed*.
Each old diagnostic matches at most one new one.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from lsp_agent.diagnostics.model import Diagnostic
from lsp_agent.diagnostics.positions import split_lines

MAX_DIFF_LINES = 20_000
"""Above this many changed lines (old + new, after trimming the common prefix and suffix) no
line diff is computed: only the unchanged prefix and suffix are mapped."""


@dataclass(frozen=True, kw_only=True)
class Classification:
    """The outcome for one document and one source. Each tuple is sorted by position."""

    new: tuple[Diagnostic, ...]
    fixed: tuple[Diagnostic, ...]
    preexisting: tuple[Diagnostic, ...]


@dataclass(frozen=True, kw_only=True)
class LineMap:
    """Where each old line went in the new text.

    ``moved[old]`` is the new line of an unchanged old line; ``rewritten[old]`` is the
    half-open range of new lines that replaced a changed old line.
    """

    moved: dict[int, int]
    rewritten: dict[int, tuple[int, int]]


def line_map(old_text: str, new_text: str) -> LineMap:
    """Map old lines to new lines (see :class:`LineMap`)."""
    old = split_lines(old_text)
    new = split_lines(new_text)
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    moved = {i: i for i in range(prefix)}
    for k in range(suffix):
        moved[len(old) - 1 - k] = len(new) - 1 - k
    rewritten: dict[int, tuple[int, int]] = {}
    old_mid = old[prefix : len(old) - suffix]
    new_mid = new[prefix : len(new) - suffix]
    if len(old_mid) + len(new_mid) > MAX_DIFF_LINES:
        for i in range(len(old_mid)):
            rewritten[prefix + i] = (prefix, prefix + len(new_mid))
        return LineMap(moved=moved, rewritten=rewritten)
    matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                moved[prefix + i1 + k] = prefix + j1 + k
        elif tag in ("replace", "delete"):
            for i in range(i1, i2):
                rewritten[prefix + i] = (prefix + j1, prefix + j2)
    return LineMap(moved=moved, rewritten=rewritten)


def _line(lines: Sequence[str], index: int) -> str | None:
    return lines[index].strip() if 0 <= index < len(lines) else None


def classify(
    *,
    before: Sequence[Diagnostic],
    after: Sequence[Diagnostic],
    old_text: str,
    new_text: str,
) -> Classification:
    """Split ``after`` into new and pre-existing diagnostics and find the fixed ones of
    ``before``; see the module docstring for the matching rules."""
    mapping = line_map(old_text, new_text)
    old_lines = split_lines(old_text)
    new_lines = split_lines(new_text)
    remaining = sorted(before, key=lambda d: (d.range.start, d.message))
    ordered = sorted(after, key=lambda d: (d.range.start, d.message))
    matched: dict[int, Diagnostic] = {}

    def take(index: int, old: Diagnostic) -> None:
        matched[index] = old
        remaining.remove(old)

    rules = (
        lambda old, cur: mapping.moved.get(old.line) == cur.line,
        lambda old, cur: (
            _line(old_lines, old.line) is not None
            and _line(old_lines, old.line) == _line(new_lines, cur.line)
        ),
        lambda old, cur: (
            old.line in mapping.rewritten
            and mapping.rewritten[old.line][0]
            <= cur.line
            < max(mapping.rewritten[old.line][1], mapping.rewritten[old.line][0] + 1)
        ),
    )
    for rule in rules:
        for index, current in enumerate(ordered):
            if index in matched:
                continue
            for old in remaining:
                if old.key() == current.key() and rule(old, current):
                    take(index, old)
                    break
    new = tuple(d for i, d in enumerate(ordered) if i not in matched)
    pre = tuple(d for i, d in enumerate(ordered) if i in matched)
    return Classification(new=new, fixed=tuple(remaining), preexisting=pre)
