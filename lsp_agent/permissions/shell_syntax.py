"""The result of shell analysis: words, redirections, simple commands (see
:mod:`lsp_agent.permissions.shell`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, kw_only=True)
class Word:
    """One shell word. ``value`` is its literal text after quote removal and ``~`` expansion,
    or ``None`` when it is dynamic; ``glob`` says it has unquoted ``*``/``?`` (``value`` then
    holds the pattern); ``source`` is the text as written; ``why`` says why it is dynamic;
    ``variables`` names the shell variables it expands (outside nested substitutions);
    ``expansion`` is set for plain brace lists."""

    value: str | None
    source: str
    glob: bool = False
    why: str | None = None
    variables: tuple[str, ...] = ()
    expansion: tuple[str, ...] | None = None
    """For a plain literal brace expansion (``part{1,2}.diff``), the words it yields
    (:func:`~lsp_agent.permissions.braces.expand_braces`); ``value`` stays ``None``."""


@dataclass(frozen=True, kw_only=True)
class Redirect:
    """One redirection: ``op`` (``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``<``, ``<<<``, ``<<``,
    ``>&``, ``<&``, ``<>``), the ``fd`` it applies to (if written) and its ``target`` word
    (``None`` for here-documents). ``cwd`` is the directory it is resolved in (``None``:
    unknown). ``variables`` names the shell variables an unquoted here-document or a
    here-string expands."""

    op: str
    target: Word | None
    fd: str | None
    cwd: Path | None
    variables: tuple[str, ...] = ()

    @property
    def writes(self) -> bool:
        """Whether it writes a file (output redirection to something other than an fd)."""
        if self.op in (">&", "<&"):
            return self.target is None or not _is_fd_target(self.target)
        return self.op in (">", ">>", ">|", "&>", "&>>", "<>")

    @property
    def reads(self) -> bool:
        """Whether it reads a file (``<``)."""
        return self.op == "<"


def _is_fd_target(word: Word) -> bool:
    return word.value is not None and (word.value.isdigit() or word.value == "-")


@dataclass(frozen=True, kw_only=True)
class SimpleCommand:
    """One simple command: ``words`` (name first), prefix ``assignments`` (variable names),
    its ``redirects``, the ``cwd`` it runs in (``None`` when a ``cd`` made it unknown) and its
    source ``text``."""

    words: tuple[Word, ...]
    assignments: tuple[str, ...]
    redirects: tuple[Redirect, ...]
    cwd: Path | None
    text: str

    @property
    def name(self) -> str | None:
        """The literal command name, or ``None`` (dynamic or absent)."""
        return self.words[0].value if self.words else None


@dataclass(kw_only=True)
class Analysis:
    """What :func:`analyze` found. ``commands`` lists every simple command (nested ones too),
    in source order; ``redirects`` every redirection (also those on compound statements)."""

    commands: list[SimpleCommand] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)
