"""Glob patterns → regular expressions over ``/``-separated relative paths.

Why not ``rg --glob``: ripgrep treats ``--glob`` as an override that wins over ``.gitignore``,
so ``*.log`` would list ignored log files. Glob therefore lists the non-ignored files with
``rg --files`` and filters them with this matcher.

Syntax and anchoring follow ripgrep's globs (gitignore style): a pattern without ``/`` matches
the file name at any depth; a pattern with ``/`` is anchored at the search directory (a
leading ``/`` is allowed). ``*`` and ``?`` stay within one path component, ``**`` as a whole
component spans any number of directories, ``[...]``/``[!...]`` are character classes,
``{a,b}`` alternatives (nestable), and ``\\`` escapes the next character.
"""

from __future__ import annotations

import re

from lsp_agent.tools.base import ToolError


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex that fully matches the relative paths ``pattern`` selects.

    Raises :class:`ToolError` for an unbalanced ``{``/``}``.
    """
    anchored = "/" in pattern.rstrip("/")
    body = _translate(pattern.lstrip("/"))
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"{prefix}{body}", re.DOTALL)


def _translate(pattern: str) -> str:
    out: list[str] = []
    depth = 0
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif pattern.startswith("**", i):
            whole_component = (i == 0 or pattern[i - 1] == "/") and (
                i + 2 == n or pattern[i + 2] == "/"
            )
            if whole_component and i + 2 == n:
                out.append(".*")
                i += 2
            elif whole_component:
                out.append("(?:[^/]*/)*")
                i += 3
            else:
                out.append("[^/]*")
                i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            translated, i = _char_class(pattern, i)
            out.append(translated)
        elif char == "{":
            depth += 1
            out.append("(?:")
            i += 1
        elif char == "," and depth:
            out.append("|")
            i += 1
        elif char == "}" and depth:
            depth -= 1
            out.append(")")
            i += 1
        else:
            out.append(re.escape(char))
            i += 1
    if depth:
        raise ToolError(f"Invalid glob {pattern!r}: unbalanced '{{'.")
    return "".join(out)


def _char_class(pattern: str, start: int) -> tuple[str, int]:
    """Translate ``[...]`` at ``start``; an unclosed ``[`` is a literal."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    first = i
    # A "]" right after the opening (or its negation) is a member, not the end.
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    end = pattern.find("]", i)
    if end == -1:
        return re.escape("["), start + 1
    members = pattern[first:end].replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return f"[{'^/' if negate else ''}{members}]", end + 1


_PREFILTER_TYPE = "lspagentglob"
# Characters a name glob may contain for ripgrep's matcher and ours to agree on it exactly
# (besides "*", "{", "}", ","). "?" is left out on purpose: ripgrep's glob matches one byte,
# ours one character.
_PLAIN_NAME = re.compile(r"[\w.\- +@~%=#$&'()!^]+")


def name_prefilter_args(pattern: str) -> list[str]:
    """ripgrep arguments that list only files whose *name* matches the pattern's last
    component, or ``[]`` when the pattern gives no such safe filter.

    A file type (``--type-add``/``--type``) is used, not ``--glob``: ripgrep applies types
    after ignore rules, so ignored files stay ignored, while ``--glob`` would override them.
    The filter only narrows the listing; :func:`compile_glob`'s matcher still decides, so the
    filter must never drop a path the matcher accepts: it is only built from literal
    characters, ``*`` and one level of ``{a,b}``, whose meaning is the same for both.
    """
    head, _, name = pattern.rstrip("/").rpartition("/")
    if "{" in head or "}" in head or "**" in name or not name.strip("*"):
        return []
    depth = 0
    for part in re.split(r"([*{},])", name):
        if part == "{":
            depth += 1
            if depth > 1:
                return []
        elif part == "}":
            depth -= 1
            if depth < 0:
                return []
        elif (part == "," and not depth) or (
            part and part not in "*," and not _PLAIN_NAME.fullmatch(part)
        ):
            return []
    if depth:
        return []
    return [f"--type-add={_PREFILTER_TYPE}:{name}", f"--type={_PREFILTER_TYPE}"]


def prefilter_is_exact(pattern: str) -> bool:
    """Whether :func:`name_prefilter_args` alone selects exactly the files the pattern
    matches: a name pattern that applies at any depth (``NAME`` or ``**/NAME``), so the
    listing needs no second check."""
    if not name_prefilter_args(pattern):
        return False
    return "/" not in pattern or (pattern.startswith("**/") and "/" not in pattern[3:])
