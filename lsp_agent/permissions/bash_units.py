"""The simple commands of a Bash command line, as the permission engine judges them.

:func:`units_of` lists every simple command of a parsed command line plus those inside literal
``bash -c '...'`` / ``eval`` strings (nested up to :data:`MAX_NESTED_SHELL` deep);
:func:`view` gives the word forms rules are matched against (wrapped commands, basenames,
folded case); :func:`rereadings` and :func:`crude_units` are the extra readings used to match
deny and ask rules when the parser found the text odd (never to allow anything).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from lsp_agent.permissions.paths import fold, resolve
from lsp_agent.permissions.rules import CommandView
from lsp_agent.permissions.shell import Analysis, Redirect, ShellAnalyzer, SimpleCommand, Word

MAX_NESTED_SHELL = 4
"""How deep ``bash -c '...'`` strings are analysed."""

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "exec",
        "nohup",
        "setsid",
        "builtin",
        "command",
        "env",
        "timeout",
        "nice",
        "time",
        "stdbuf",
        "xargs",
        "ionice",
        "chrt",
        "taskset",
        "watch",
        "flock",
        "unbuffer",
        "then",
        "do",
        "else",
    }
)
"""Commands that run another command (for deny/ask matching, the inner command counts too)."""


@dataclass(frozen=True, kw_only=True)
class Unit:
    """One simple command as the engine judges it; ``nested`` inside a ``bash -c`` string."""

    cmd: SimpleCommand
    nested: bool = False


def units_of(
    analysis: Analysis, shell: ShellAnalyzer, *, depth: int = 0
) -> tuple[list[Unit], list[str]]:
    """Simple commands plus those inside literal ``bash -c`` / ``eval`` strings, and the
    problems met analysing the strings."""
    units = [Unit(cmd=c, nested=depth > 0) for c in analysis.commands]
    problems: list[str] = []
    for cmd in analysis.commands:
        inner = inline_script(cmd)
        if inner is None:
            continue
        if depth >= MAX_NESTED_SHELL:
            problems.append("shell commands nested too deeply")
            continue
        nested = shell.analyze(inner, cwd=cmd.cwd)
        more, more_problems = units_of(nested, shell, depth=depth + 1)
        units.extend(more)
        problems.extend(more_problems + nested.problems + nested.unsafe)
    return units, problems


def view(cmd: SimpleCommand) -> CommandView:
    """Strict words plus loose variants (basename of a path, wrapped commands, folded case)."""
    # Brace lists in argument position only yield more arguments: read them expanded.
    values: list[str | None] = [cmd.words[0].value] if cmd.words else []
    for w in cmd.words[1:]:
        values.extend(w.expansion if w.expansion is not None else [w.value])
    strict = tuple(v for v in values if v is not None) if None not in values else None
    loose = tuple(w.value if w.value is not None else w.source for w in cmd.words)
    variants: list[tuple[str, ...]] = []

    def add(words: tuple[str, ...]) -> None:
        if not words:
            return
        for form in (words, (os.path.basename(words[0]) or words[0], *words[1:])):
            folded = (fold(form[0]), *form[1:])
            for candidate in (form, folded):
                if candidate not in variants:
                    variants.append(candidate)

    add(loose)
    if strict is not None:
        add(strict)
    # ``{rm,-rf,x}`` runs ``rm -rf x``: read a plain brace list as the words it expands to.
    if len(cmd.words) >= 1 and cmd.words[0].why in ("brace expansion", "unparsed"):
        inner = re.fullmatch(r"\{([^{}]*,[^{}]*)\}", cmd.words[0].source)
        if inner:
            add((*inner.group(1).split(","), *loose[1:]))
    # Wrappers run their last words as a command: try every suffix that starts a command.
    queue = [loose]
    seen = 0
    while queue and seen < 32:
        words = queue.pop()
        seen += 1
        head = os.path.basename(words[0]) if words else ""
        if head not in WRAPPERS:
            continue
        for index in range(1, len(words)):
            word = words[index]
            if word.startswith("-") or "=" in word or word.replace(".", "").isdigit():
                continue
            suffix = words[index:]
            add(suffix)
            queue.append(suffix)
    return CommandView(words=strict, loose=loose, variants=tuple(variants))


def inline_script(cmd: SimpleCommand) -> str | None:
    """The literal script of ``bash -c 'SCRIPT'`` or ``eval 'a' 'b'``, else ``None``."""
    words = [w.value for w in cmd.words]
    if not words or words[0] is None:
        return None
    name = os.path.basename(words[0])
    if name == "eval" and len(words) > 1 and all(w is not None for w in words[1:]):
        return " ".join(w for w in words[1:] if w is not None)
    if name in SHELLS:
        for index, word in enumerate(words[1:], start=1):
            if (
                word is not None
                and word.startswith("-")
                and "c" in word[1:]
                and not word.startswith("--")
            ):
                nxt = words[index + 1] if index + 1 < len(words) else None
                return nxt
    return None


def rereadings(command: str) -> list[str]:
    """Other ways bash might read a command tree-sitter found odd (for deny matching only)."""
    out = []
    for variant in (
        command.replace("\\\n", ""),
        command.replace("\r", "\n"),
        command.replace("\r", ""),
    ):
        if variant != command and variant not in out:
            out.append(variant)
    return out


def crude_units(command: str, cwd: Path | None) -> list[Unit]:
    """Words of each piece between shell operators, for deny/ask matching of commands the
    parser could not read (never used to allow anything)."""
    units: list[Unit] = []
    for piece in re.split(r"[;&|\n\r()`]+|\$\(", command):
        try:
            words = shlex.split(piece, comments=False, posix=True)
        except ValueError:
            words = piece.split()
        if words:
            cmd = SimpleCommand(
                words=tuple(Word(value=None, source=w, why="unparsed") for w in words),
                assignments=(),
                redirects=(),
                cwd=cwd,
                text=piece,
            )
            units.append(Unit(cmd=cmd))
    return units


def redirect_path(redirect: Redirect) -> Path | None:
    target: Word | None = redirect.target
    if target is None or target.value is None:
        return None
    raw = target.value
    if raw.startswith("/"):
        return resolve(Path(raw))
    if redirect.cwd is None:
        return None
    return resolve(Path(raw), cwd=redirect.cwd)
