"""Rule files (``.claude/rules/**/*.md``): ``paths:`` frontmatter and glob matching.

Claude Code's rule frontmatter (docs: "Rule frontmatter reference"): ``paths`` is the only
field read, a YAML list or a comma-separated string of globs relative to the project folder;
``**`` spans folders and ``{a,b}`` expands, within a budget of 1,000 expanded patterns per rule.
Frontmatter that does not parse is ignored and the rule loads as if it had no ``paths``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.context.memory.types import MemoryNotice, Span

if TYPE_CHECKING:
    from frontmatter.default_handlers import YAMLHandler

BRACE_LIMIT = 1000
"""Expanded patterns a rule's ``paths`` may produce (Claude Code's brace budget)."""

KNOWN_KEYS = frozenset({"paths"})

# PyYAML and wcmatch are imported on first use: a folder without frontmatter or rules with
# ``paths`` never loads them (they are not on the way to a session's first model request).


@cache
def _yaml() -> YAMLHandler:
    from frontmatter.default_handlers import YAMLHandler

    return YAMLHandler()


def _globmatch(path: str, pattern: str) -> bool:
    """wcmatch's ``globmatch`` with ``**`` across folders, ``{a,b}``, dot files matched like
    others and ``!`` excludes, within :data:`BRACE_LIMIT`; raises what wcmatch raises for an
    invalid pattern (``ValueError``, ``PatternLimitException``)."""
    from wcmatch import glob as wcglob

    flags = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB | wcglob.NEGATE
    return wcglob.globmatch(path, pattern, flags=flags, limit=BRACE_LIMIT)


@dataclass(frozen=True, kw_only=True)
class Frontmatter:
    """A memory file split at its frontmatter: ``body`` and the line it starts on,
    ``globs`` of ``paths:`` and problems with the block."""

    body: str
    body_line: int
    globs: tuple[str, ...] = ()
    notices: tuple[MemoryNotice, ...] = ()


def split_frontmatter(path: Path, text: str, *, rule: bool) -> Frontmatter:
    """Split ``text`` of ``path`` at a leading ``---`` YAML block (removed from what the model
    sees). For a ``rule``, ``paths`` is read and unknown keys are reported. Never raises."""
    if not text.startswith("---") or not _yaml().detect(text):
        return Frontmatter(body=text, body_line=0)
    try:
        raw, body = _yaml().split(text)
    except ValueError:  # an opening --- without a closing one: no frontmatter
        return Frontmatter(body=text, body_line=0)
    body_line = text[: len(text) - len(body)].count("\n")
    if body.startswith("\n"):
        body, body_line = body[1:], body_line + 1
    if not rule:
        return Frontmatter(body=body, body_line=body_line)
    try:
        data = _yaml().load(raw)
    except Exception as exc:  # PyYAML raises many types; all mean "does not parse"
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Frontmatter(
            body=body,
            body_line=body_line,
            notices=(
                MemoryNotice(
                    path=path,
                    code="frontmatter",
                    message=f"frontmatter does not parse ({first}); the rule applies to every file",
                    span=Span(line=0, start=0, end=3),
                ),
            ),
        )
    if data is None:
        return Frontmatter(body=body, body_line=body_line)
    if not isinstance(data, dict):
        return Frontmatter(
            body=body,
            body_line=body_line,
            notices=(
                MemoryNotice(
                    path=path,
                    code="frontmatter",
                    message="frontmatter must be a mapping (paths: [...]); ignored",
                    span=Span(line=0, start=0, end=3),
                ),
            ),
        )
    notices: list[MemoryNotice] = []
    lines = text.split("\n")
    for key in data:
        if str(key) not in KNOWN_KEYS:
            notices.append(
                MemoryNotice(
                    path=path,
                    code="unknown-key",
                    message=f"unknown rule frontmatter key {key!r}: ignored (only `paths` is read)",
                    severity="information",
                    span=_key_span(lines, str(key), body_line),
                )
            )
    globs, problem = _globs(data.get("paths"))
    if problem is not None:
        notices.append(
            MemoryNotice(
                path=path,
                code="frontmatter",
                message=problem,
                span=_key_span(lines, "paths", body_line),
            )
        )
    return Frontmatter(body=body, body_line=body_line, globs=globs, notices=tuple(notices))


def _globs(value: object) -> tuple[tuple[str, ...], str | None]:
    if value is None:
        return (), None
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip()), None
    if isinstance(value, list) and all(isinstance(p, str) for p in value):
        return tuple(p.strip() for p in value if p.strip()), None
    return (), "`paths` must be a list of glob strings or a comma-separated string; ignored"


def _key_span(lines: list[str], key: str, limit: int) -> Span:
    for number, line in enumerate(lines[:limit]):
        if line.startswith(f"{key}:"):
            return Span(line=number, start=0, end=len(key))
    return Span(line=0, start=0, end=3)


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be used, or ``None`` (an unclosed ``[``, too many expansions)."""
    try:
        _globmatch("x", pattern)
    except Exception as exc:  # wcmatch raises ValueError / PatternLimitException
        return f"invalid glob {pattern!r}: {exc}"
    return None


def rule_applies(globs: tuple[str, ...], base: Path, path: Path) -> bool:
    """Whether a rule with ``paths`` ``globs`` (relative to ``base``) covers ``path``
    (absolute). A path outside ``base`` never matches; invalid patterns match nothing."""
    try:
        relative = os.path.relpath(path, base)
    except ValueError:  # another drive on Windows
        return False
    if relative.startswith(".."):
        return False
    relative = relative.replace(os.sep, "/")
    for pattern in globs:
        try:
            if _globmatch(relative, pattern):
                return True
        except Exception:  # an invalid pattern matches nothing; reported at load
            continue
    return False
