"""Exact string replacement for ``Edit``: matching on ``\\n`` text, writing the file's breaks.

The model writes ``old_string``/``new_string`` with ``\\n`` line breaks whatever the file uses.
Matching runs on the file's ``\\n`` view (:class:`~lsp_agent.tools._text.LfView`); each
replacement is first shrunk to the part that really changes (common prefix and suffix of old
and new removed), then mapped back to the original text, so line breaks outside the changed
characters stay byte-exact in CRLF and mixed files. Added breaks use the file's dominant one.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass

from lsp_agent.tools._text import LfView, dominant_eol, numbered, split_lines, to_lf, with_eol
from lsp_agent.tools.base import ToolError

_FULL_SCAN_WINDOWS = 5000
"""Up to this many candidate windows, the not-found search compares every one."""

_MIN_SIMILARITY = 0.4
"""Below this, no text is shown as "most similar"."""

_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+(\t|→)")


@dataclass(frozen=True, kw_only=True)
class Replacement:
    """The result of replacing in a text.

    ``new_text`` is the whole new text (original line breaks kept). ``first_line`` is the
    1-based line where the first change starts and ``first_span`` how many lines of the new
    text that change covers. ``count`` is the number of occurrences replaced.
    """

    new_text: str
    first_line: int
    first_span: int
    count: int


def find_all(haystack: str, needle: str) -> list[int]:
    """Start offsets of the non-overlapping occurrences of ``needle`` (non-empty)."""
    starts: list[int] = []
    at = haystack.find(needle)
    while at != -1:
        starts.append(at)
        at = haystack.find(needle, at + len(needle))
    return starts


def replace_exact(text: str, old_string: str, new_string: str, *, replace_all: bool) -> Replacement:
    """Replace ``old_string`` by ``new_string`` in ``text`` (both given with ``\\n`` breaks).

    Raises :class:`ToolError` when ``old_string`` is not found (the message shows the most
    similar lines of the file), or found more than once without ``replace_all`` (the message
    gives the count and line numbers). Deleting whole lines (``new_string`` empty,
    ``old_string`` covering complete lines) also removes the line break after them.
    """
    old_lf, new_lf = to_lf(old_string), to_lf(new_string)
    if old_lf == new_lf:
        raise ToolError("No changes to make: old_string and new_string are exactly the same.")
    view = LfView(text)
    starts = find_all(view.text, old_lf)
    if not starts:
        raise ToolError(not_found_message(view.text, old_lf))
    if len(starts) > 1 and not replace_all:
        lines = [view.line_of(start) for start in starts]
        shown = ", ".join(str(line) for line in lines[:20])
        more = f" and {len(lines) - 20} more" if len(lines) > 20 else ""
        raise ToolError(
            f"Found {len(starts)} matches of old_string (at lines {shown}{more}), but "
            "replace_all is false. To replace all of them, set replace_all to true. To replace "
            "only one, provide more surrounding context in old_string to make it unique."
        )
    eol = dominant_eol(text)
    pieces: list[str] = []
    cursor = 0  # original offset up to which text was copied
    first_line = first_span = 0
    for index, start in enumerate(starts):
        end = start + len(old_lf)
        next_start = starts[index + 1] if index + 1 < len(starts) else len(view.text) + 1
        if (
            not new_lf
            and not old_lf.endswith("\n")
            and (start == 0 or view.text[start - 1] == "\n")
            and view.text.startswith("\n", end)
            and next_start > end
        ):
            end += 1
        old_piece = view.text[start:end]
        prefix = _common_prefix(old_piece, new_lf)
        suffix = _common_suffix(old_piece[prefix:], new_lf[prefix:])
        inserted = new_lf[prefix : len(new_lf) - suffix]
        region_start = view.to_original(start + prefix)
        region_end = view.to_original(end - suffix)
        pieces.append(text[cursor:region_start])
        pieces.append(with_eol(inserted, eol))
        cursor = region_end
        if not first_line:
            first_line = view.line_of(start + prefix)
            first_span = inserted.count("\n") + 1
    pieces.append(text[cursor:])
    return Replacement(
        new_text="".join(pieces), first_line=first_line, first_span=first_span, count=len(starts)
    )


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    n = 0
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def _common_suffix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    n = 0
    while n < limit and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def not_found_message(text_lf: str, old_lf: str) -> str:
    """The model-facing "not found" error: hints plus the most similar lines, numbered."""
    parts = ["String to replace not found in file (old_string must match the file exactly)."]
    old_lines = old_lf.strip("\n").split("\n")
    if all(_LINE_NUMBER_PREFIX.match(line) for line in old_lines if line.strip()):
        parts.append(
            "old_string seems to include line-number prefixes from Read output; "
            "copy only the text after the tab."
        )
    indent = _indent_mismatch(text_lf, old_lf)
    if indent:
        parts.append(indent)
    lines = split_lines(text_lf)
    best = closest_window(lines, old_lf)
    if best is None:
        parts.append("No similar text was found in the file; read it again to check its content.")
        return "\n".join(parts)
    first, count, ratio = best
    window = lines[first : first + count]
    if _squash("\n".join(window)) == _squash(old_lf):
        parts.append("The closest text differs only in whitespace or indentation.")
    parts.append(
        f"The most similar text in the file (lines {first + 1}-{first + count}, "
        f"{ratio:.0%} similar) is:\n{numbered(window, first + 1)}"
    )
    return "\n".join(parts)


_LEADING_SPACES = re.compile(r"^( +)", re.MULTILINE)
_LEADING_TABS = re.compile(r"^(\t+)", re.MULTILINE)


def _as_tabs(match: re.Match[str], *, width: int) -> str:
    spaces = len(match.group(1))
    return "\t" * (spaces // width) + " " * (spaces % width)


def _as_spaces(match: re.Match[str], *, width: int) -> str:
    return " " * (len(match.group(1)) * width)


def _indent_mismatch(text_lf: str, old_lf: str) -> str | None:
    """The exact hint when ``old_lf`` would match if its indentation used the file's
    character: spaces where the file indents with tabs (tried at widths 8, 4 and 2), or tabs
    where the file uses spaces."""
    for width in (8, 4, 2):
        if _LEADING_SPACES.search(old_lf) is None:
            break
        tabbed = _LEADING_SPACES.sub(functools.partial(_as_tabs, width=width), old_lf)
        if tabbed != old_lf and tabbed in text_lf:
            line = text_lf[: text_lf.index(tabbed)].count("\n") + 1
            return (
                "old_string indents with spaces, but the file indents with tabs: the text "
                f"matches at line {line} when each {width} leading spaces are a tab. Use tab "
                "characters in old_string (and new_string) exactly as in the file."
            )
    for width in (4, 8, 2):
        if _LEADING_TABS.search(old_lf) is None:
            break
        spaced = _LEADING_TABS.sub(functools.partial(_as_spaces, width=width), old_lf)
        if spaced in text_lf:
            line = text_lf[: text_lf.index(spaced)].count("\n") + 1
            return (
                "old_string indents with tabs, but the file indents with spaces: the text "
                f"matches at line {line} when each tab is {width} spaces. Use spaces in "
                "old_string (and new_string) exactly as in the file."
            )
    return None


def closest_window(lines: list[str], old_lf: str) -> tuple[int, int, float] | None:
    """The window of ``len(old lines)`` consecutive lines most similar to ``old_lf``.

    Returns ``(first_index, line_count, ratio)`` (``difflib`` ratio, 0..1) or ``None`` when
    nothing reaches :data:`_MIN_SIMILARITY`. Large files only compare windows sharing at
    least one (stripped, non-blank) line with ``old_lf``, to stay fast.
    """
    target = old_lf.strip("\n")
    if not target.strip() or not lines:
        return None
    size = min(target.count("\n") + 1, len(lines))
    n_windows = len(lines) - size + 1
    if n_windows <= _FULL_SCAN_WINDOWS:
        candidates: list[int] = list(range(n_windows))
    else:
        wanted = {line.strip() for line in target.split("\n") if line.strip()}
        hits = {i for i, line in enumerate(lines) if line.strip() in wanted}
        candidates = sorted(
            {w for i in hits for w in range(max(0, i - size + 1), min(i, n_windows - 1) + 1)}
        )[:_FULL_SCAN_WINDOWS]
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    best_ratio, best_first = _MIN_SIMILARITY, -1
    for first in candidates:
        matcher.set_seq1("\n".join(lines[first : first + size]))
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best_ratio, best_first = ratio, first
    if best_first < 0:
        return None
    return best_first, size, best_ratio


def _squash(text: str) -> str:
    return " ".join(text.split())
