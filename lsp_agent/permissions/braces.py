"""Bash brace expansion of plain literal words, so that ``wc -l part{1,2,3}.diff`` is judged
as the words it runs (``wc -l part1.diff part2.diff part3.diff``).

Only words made of "safe" characters are expanded (letters, digits and ``_ . / @ % + = : , -``
besides the braces): no quotes, escapes, ``$``, globs or ``~``, whose interplay with brace
expansion is subtle. Comma lists (``{a,b}``, nested ``{a,{b,c}}``) and sequences (``{1..3}``,
``{a..e}``, ``{01..10}``, ``{1..9..2}``) expand as bash 5 does (bash manual, "Brace
Expansion"); a brace pair that is neither (``{a}``, ``{}``) stays literal.
"""

from __future__ import annotations

import itertools
import re

MAX_WORDS = 256
"""A brace expansion yielding more words than this is not expanded (the command asks)."""

_SAFE = re.compile(r"[A-Za-z0-9_./@%+=:,{}-]+")
_SEQUENCE = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")


def expand_braces(word: str) -> tuple[str, ...] | None:
    """The words bash's brace expansion turns ``word`` into, or ``None`` when the word is not
    a plain literal (see the module docstring) or yields more than :data:`MAX_WORDS`."""
    if not _SAFE.fullmatch(word):
        return None
    try:
        out = _expand(word)
    except _TooManyError:
        return None
    return tuple(out)


class _TooManyError(Exception):
    pass


def _expand(word: str) -> list[str]:
    for start, end, items in _groups(word):
        results: list[str] = []
        for item in items:
            results.extend(_expand(word[:start] + item + word[end:]))
            if len(results) > MAX_WORDS:
                raise _TooManyError
        return results
    return [word]


def _groups(word: str) -> list[tuple[int, int, list[str]]]:
    """The first expandable brace pair of ``word``: ``[(start, end, items)]`` or ``[]``."""
    for start, char in enumerate(word):
        if char != "{":
            continue
        depth = 0
        commas: list[int] = []
        for end in range(start, len(word)):
            if word[end] == "{":
                depth += 1
            elif word[end] == "}":
                depth -= 1
                if depth == 0:
                    inner = word[start + 1 : end]
                    items = _items(inner, [c - start - 1 for c in commas])
                    if items is not None:
                        return [(start, end + 1, items)]
                    break
            elif word[end] == "," and depth == 1:
                commas.append(end)
    return []


def _items(inner: str, commas: list[int]) -> list[str] | None:
    if commas:
        cuts = [-1, *commas, len(inner)]
        return [inner[a + 1 : b] for a, b in itertools.pairwise(cuts)]
    match = _SEQUENCE.fullmatch(inner)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.lstrip("-").isdigit() != last.lstrip("-").isdigit():
        return None
    if first.lstrip("-").isdigit():
        a, b = int(first), int(last)
        padded = first.lstrip("-").startswith("0") or last.lstrip("-").startswith("0")
        width = max(len(first), len(last)) if padded else 0
        numbers = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        if len(numbers) > MAX_WORDS:
            raise _TooManyError
        return [str(n).zfill(width) if width else str(n) for n in numbers]
    a, b = ord(first), ord(last)
    codes = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
    return [chr(c) for c in codes]
