"""Shell command analysis with tree-sitter-bash: split a command line into simple commands.

:func:`analyze` parses a ``bash -c`` command string and returns every *simple command* it may
run — across ``&&``, ``||``, ``;``, ``|``, ``&``, newlines, subshells, ``{ }`` groups, ``if``/
``for``/``while``/``case`` bodies, command substitution (``$(...)``, backticks), process
substitution and unquoted here-documents — with its words after quote removal, its
redirections and the working directory it runs in (``cd`` changes it for later commands).

Anything the analysis cannot follow exactly is reported in :attr:`Analysis.problems` (the
caller must then ask): parse errors, tokens tree-sitter skipped (a backslash-newline inside a
word, a carriage return between words), unknown node types. Constructs it understands but that
can run code or change how later commands behave are reported in :attr:`Analysis.unsafe`
(function definitions, ``declare``/``export``, variable assignments, arithmetic on variables,
``${x@P}``-style expansions, ``[[ -v ]]``).

Word values follow bash's quote removal: ``'r''m'``, ``r\\m``, ``"rm"`` and ``$'\\x72m'`` are
all ``rm``. A word with an expansion, a substitution or a brace expansion has no literal value
(``Word.value is None``); unquoted ``*``/``?`` make a glob (expanded later against the disk).

The data types are in :mod:`~lsp_agent.permissions.shell_syntax`, the walk over the syntax tree
in :mod:`~lsp_agent.permissions.shell_walk`, word text decoding in
:mod:`~lsp_agent.permissions.shell_words`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.permissions.shell_syntax import Analysis, Redirect, SimpleCommand, Word
from lsp_agent.permissions.shell_walk import State, Walker

if TYPE_CHECKING:
    from tree_sitter import Parser

__all__ = ["Analysis", "Redirect", "ShellAnalyzer", "SimpleCommand", "Word"]

MAX_COMMAND_CHARS = 100_000
"""Longer command strings are not analysed (the caller asks)."""


class ShellAnalyzer:
    """Parses command strings with tree-sitter-bash (the parser is created on first use).

    ``home`` is used for ``~`` and bare ``cd``; ``cdpath`` is the ``CDPATH`` value of the
    environment commands run in (when set, ``cd name`` may go elsewhere, so it makes the
    directory unknown).
    """

    def __init__(self, *, home: Path, cdpath: str | None = None) -> None:
        self.home = home
        self.cdpath = cdpath
        self._parser: Parser | None = None

    def _get_parser(self) -> Parser:
        if self._parser is None:
            import tree_sitter
            import tree_sitter_bash

            self._parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        return self._parser

    def analyze(self, command: str, *, cwd: Path | None) -> Analysis:
        """Analyse ``command`` run in ``cwd``; never raises (problems are reported)."""
        result = Analysis()
        if len(command) > MAX_COMMAND_CHARS:
            result.problems.append(f"the command is longer than {MAX_COMMAND_CHARS} characters")
            return result
        if "\x00" in command:
            result.problems.append("the command contains a NUL character")
            return result
        source = command.encode("utf-8", "surrogatepass")
        tree = self._get_parser().parse(source)
        if tree.root_node.has_error:
            result.problems.append(
                "bash could parse this differently: the syntax is not understood"
            )
        walker = Walker(source=source, home=self.home, cdpath=self.cdpath, out=result)
        walker.statement(tree.root_node, State(cwd=cwd), depth=0)
        return result
