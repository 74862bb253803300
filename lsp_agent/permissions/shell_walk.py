"""The walk over a tree-sitter-bash syntax tree that lists simple commands, redirections,
problems and unsafe constructs (see :mod:`lsp_agent.permissions.shell`). Each statement type
has its handler in :data:`_STATEMENTS`; a type not there is a problem (the caller asks)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from lsp_agent.permissions.braces import expand_braces
from lsp_agent.permissions.shell_syntax import Analysis, Redirect, SimpleCommand, Word
from lsp_agent.permissions.shell_words import (
    assemble,
    descendants,
    outer,
)

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_DEPTH = 200
"""Deeper syntax trees are not analysed (the caller asks)."""

CD_COMMANDS = frozenset({"cd", "pushd", "popd"})

SAFE_EXPANSION_OPERATORS = frozenset(
    {
        ":-",
        "-",
        ":+",
        "+",
        "#",
        "##",
        "%",
        "%%",
        "/",
        "//",
        "/#",
        "/%",
        ",",
        ",,",
        "^",
        "^^",
        ":?",
        "?",
    }
)
"""``${x OP word}`` operators that only substitute text (no assignment, no evaluation)."""

_ARITH_OPS = re.compile(r"-(eq|ne|lt|le|gt|ge)\b")


@dataclass(kw_only=True)
class State:
    """The walk's view of the shell: the current directory (``None`` = unknown)."""

    cwd: Path | None


class Walker:
    """Walks one parsed command string, appending what it finds to ``out``; ``home`` and
    ``cdpath`` are the analyzer's (see :class:`~lsp_agent.permissions.shell.ShellAnalyzer`)."""

    def __init__(self, *, source: bytes, home: Path, cdpath: str | None, out: Analysis) -> None:
        self.src = source
        self.home = home
        self.cdpath = cdpath
        self.out = out

    # -- helpers -------------------------------------------------------------------------------

    def text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def problem(self, message: str) -> None:
        if message not in self.out.problems:
            self.out.problems.append(message)

    def unsafe(self, message: str) -> None:
        if message not in self.out.unsafe:
            self.out.unsafe.append(message)

    def check_gaps(self, node: Node, *, newlines: bool) -> None:
        """Text between children that tree-sitter skipped must be blanks: anything else (a
        backslash-newline, a carriage return) means bash may split words differently."""
        allowed = " \t\n" if newlines else " \t"
        pos = node.start_byte
        for child in node.children:
            self._check_gap(self.src[pos : child.start_byte], allowed)
            pos = max(pos, child.end_byte)
        self._check_gap(self.src[pos : node.end_byte], allowed)

    def _check_gap(self, gap: bytes, allowed: str) -> None:
        if not gap:
            return
        # A backslash-newline is a line continuation: fine between words only if blanks
        # remain around it (``ls \<NL>-la``); ``ls\<NL>-la`` is the single word ``ls-la``.
        joined = gap.replace(b"\\\n", b"")
        if joined and all(chr(b) in allowed for b in joined):
            return
        if b"\r" in gap:
            self.problem("a carriage return separates words (bash does not split there)")
        else:
            self.problem(f"unexpected text {gap.decode('utf-8', 'replace')!r} between words")

    # -- statements ----------------------------------------------------------------------------

    def statement(self, node: Node, state: State, *, depth: int) -> None:
        """Walk one statement node: its handler in :data:`_STATEMENTS`, or a problem."""
        if depth > MAX_DEPTH:
            self.problem("the command is nested too deeply")
            return
        kind = node.type
        if node.is_error or node.is_missing or kind == "ERROR":
            self.problem(f"bash syntax error near {self.text(node)[:40]!r}")
            return
        if kind in _PUNCTUATION:
            return
        handler = _STATEMENTS.get(kind)
        if handler is None:
            self.problem(f"unsupported shell construct: {kind}")
            return
        handler(self, node, state, depth)

    def _block(self, node: Node, state: State, depth: int) -> None:
        if node.type == "compound_statement" and node.child_count and node.children[0].type == "((":
            self.arithmetic(node)
            return
        self.check_gaps(node, newlines=True)
        self.sequence(node.children, state, depth=depth)

    def _list(self, node: Node, state: State, depth: int) -> None:
        self.check_gaps(node, newlines=True)
        self.list_(node, state, depth=depth)

    def _pipeline(self, node: Node, state: State, depth: int) -> None:
        self.check_gaps(node, newlines=True)
        for child in node.children:
            if child.is_named:
                self.statement(child, State(cwd=state.cwd), depth=depth + 1)

    def _subshell(self, node: Node, state: State, depth: int) -> None:
        self.check_gaps(node, newlines=True)
        self.sequence(node.children, State(cwd=state.cwd), depth=depth)

    def _redirected(self, node: Node, state: State, depth: int) -> None:
        self.check_gaps(node, newlines=True)
        for index, child in enumerate(node.children):
            if node.field_name_for_child(index) == "redirect":
                self.redirect(child, state, depth=depth)
            elif child.is_named:
                self.statement(child, state, depth=depth + 1)

    def _command(self, node: Node, state: State, depth: int) -> None:
        self.command(node, state, depth=depth)

    def _negated(self, node: Node, state: State, depth: int) -> None:
        for child in node.named_children:
            self.statement(child, state, depth=depth + 1)

    def _conditional(self, node: Node, state: State, depth: int) -> None:
        self.conditional(node, state, depth=depth)

    def _loop(self, node: Node, state: State, depth: int) -> None:
        self.loop(node, state, depth=depth)

    def _c_style_for(self, node: Node, state: State, depth: int) -> None:
        self.unsafe("a C-style for loop evaluates arithmetic")
        self.loop(node, state, depth=depth)

    def _test(self, node: Node, state: State, depth: int) -> None:
        self.test_command(node, state, depth=depth)

    def _assignment(self, node: Node, state: State, depth: int) -> None:
        self.unsafe("it assigns shell variables, which changes how later commands run")
        self.walk_words(node, state, depth=depth)

    def _declaration(self, node: Node, state: State, depth: int) -> None:
        self.unsafe(f"{self.text(node).split()[0]} changes shell variables")
        self.walk_words(node, state, depth=depth)

    def _unset(self, node: Node, state: State, depth: int) -> None:
        self.unsafe("unset changes shell variables")

    def _function(self, node: Node, state: State, depth: int) -> None:
        self.unsafe("it defines a shell function")
        self.walk_words(node, state, depth=depth)

    def sequence(self, children: list[Node], state: State, *, depth: int) -> None:
        for child in children:
            if child.is_named or child.type not in (
                ";",
                "&",
                "\n",
                "(",
                ")",
                "{",
                "}",
                "do",
                "done",
                ";;",
            ):
                self.statement(child, state, depth=depth + 1)

    def list_(self, node: Node, state: State, *, depth: int) -> None:
        # ``a || b``: b runs when a failed, so a ``cd`` in a may or may not have happened; and
        # after ``a && cd x`` the directory is x only if a succeeded.
        children = node.children
        changed = False
        late_change = False
        position = 0
        for index, child in enumerate(children):
            if not child.is_named:
                continue
            op = children[index - 1].type if index else None
            if op == "||" and changed:
                state.cwd = None
            before = state.cwd
            self.statement(child, state, depth=depth + 1)
            if state.cwd != before or self.contains_cd(child):
                changed = True
                late_change = late_change or position > 0
            position += 1
        if changed and (late_change or any(c.type == "||" for c in children)):
            state.cwd = None

    def conditional(self, node: Node, state: State, *, depth: int) -> None:
        if self.contains_cd(node):
            # Which branch ran (and whether its ``cd`` worked) is not known.
            state.cwd = None
        for index, child in enumerate(node.children):
            name = node.field_name_for_child(index)
            if name == "value" or child.type in ("word", "string", "raw_string", "concatenation"):
                self.word(child, state, depth=depth)
            elif child.is_named:
                self.statement(child, state, depth=depth + 1)

    def loop(self, node: Node, state: State, *, depth: int) -> None:
        if self.contains_cd(node):
            # Each iteration may change directory again.
            state.cwd = None
        for index, child in enumerate(node.children):
            name = node.field_name_for_child(index)
            if name in ("value", "variable") or child.type in ("word", "string", "concatenation"):
                if name != "variable":
                    self.word(child, state, depth=depth)
            elif child.type in (
                "binary_expression",
                "unary_expression",
                "postfix_expression",
                "parenthesized_expression",
                "number",
            ):
                self.arith_node(child)
            elif child.is_named:
                self.statement(child, state, depth=depth + 1)

    def contains_cd(self, node: Node) -> bool:
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "command_name" and self.text(current).strip() in CD_COMMANDS:
                return True
            stack.extend(current.children)
        return False

    def test_command(self, node: Node, state: State, *, depth: int) -> None:
        text = self.text(node)
        has_expansion = any(
            n.type in ("simple_expansion", "expansion", "command_substitution")
            for n in descendants(node)
        )
        if _ARITH_OPS.search(text) and has_expansion:
            self.unsafe("[[ ... -eq ... ]] evaluates expanded text as arithmetic")
        if re.search(r"(^|\s)-v\s", text):
            self.unsafe("[[ -v ]] evaluates array subscripts")
        for child in outer(node):
            if child.type in ("command_substitution", "process_substitution"):
                self.substitution(child, state, depth=depth)

    def arithmetic(self, node: Node) -> None:
        self.arith_node(node)

    def arith_node(self, node: Node) -> None:
        for child in descendants(node):
            if child.type in (
                "variable_name",
                "subscript",
                "command_substitution",
                "simple_expansion",
                "expansion",
            ):
                self.unsafe("arithmetic on variables can run code (array subscripts)")
                return

    def walk_words(self, node: Node, state: State, *, depth: int) -> None:
        """Analyse substitutions nested anywhere below ``node`` (for statements whose own
        effect is already judged unsafe)."""
        for child in outer(node):
            if child.type in ("command_substitution", "process_substitution"):
                self.substitution(child, state, depth=depth)

    # -- commands ------------------------------------------------------------------------------

    def command(self, node: Node, state: State, *, depth: int) -> None:
        self.check_gaps(node, newlines=False)
        words: list[Word] = []
        assignments: list[str] = []
        redirects: list[Redirect] = []
        for index, child in enumerate(node.children):
            field_name = node.field_name_for_child(index)
            if child.type == "variable_assignment":
                name_node = child.child_by_field_name("name")
                assignments.append(self.text(name_node) if name_node else self.text(child))
                value = child.child_by_field_name("value")
                if value is not None:
                    self.word(value, state, depth=depth)
            elif field_name == "redirect" or child.type.endswith("_redirect"):
                redirects.append(self.redirect(child, state, depth=depth, record=False))
            elif child.type == "command_name":
                for part in child.named_children:
                    words.append(self.word(part, state, depth=depth))
            elif child.is_named:
                words.append(self.word(child, state, depth=depth))
        cmd = SimpleCommand(
            words=tuple(words),
            assignments=tuple(assignments),
            redirects=tuple(redirects),
            cwd=state.cwd,
            text=self.text(node),
        )
        self.out.commands.append(cmd)
        self.out.redirects.extend(redirects)
        if cmd.name in CD_COMMANDS:
            state.cwd = self.cd_target(cmd, state.cwd)

    def cd_target(self, cmd: SimpleCommand, cwd: Path | None) -> Path | None:
        """The directory after ``cd``/``pushd``/``popd`` (``None`` when it cannot be known:
        dynamic or missing target, ``cd -``, ``popd``, ``CDPATH`` lookups)."""
        args = [w for w in cmd.words[1:]]
        if cmd.name == "popd" or any(w.value is None or w.glob for w in args):
            return None
        values = [w.value for w in args if w.value is not None]
        while values and values[0] in ("-L", "-P", "-e", "-@", "--"):
            values.pop(0)
        if cmd.name == "pushd" and values and values[0].startswith(("+", "-")):
            return None
        if not values:
            return self.home if cmd.name == "cd" else None
        target = values[0]
        if target == "-" or len(values) > 1:
            return None
        if self.cdpath and not target.startswith(("/", "./", "../")) and target not in (".", ".."):
            return None
        path = Path(target)
        if not path.is_absolute():
            if cwd is None:
                return None
            path = cwd / path
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError):
            return None
        # A ``cd`` into a missing directory fails and leaves the directory where it was.
        return resolved if resolved.is_dir() else None

    def redirect(self, node: Node, state: State, *, depth: int, record: bool = True) -> Redirect:
        op = ""
        fd: str | None = None
        target: Word | None = None
        heredoc_quoted = False
        variables: list[str] = []
        for index, child in enumerate(node.children):
            name = node.field_name_for_child(index)
            if child.type == "file_descriptor":
                fd = self.text(child)
            elif not child.is_named and child.type not in ("heredoc_start", "heredoc_end"):
                op = op or child.type
            elif child.type == "heredoc_start":
                heredoc_quoted = any(q in self.text(child) for q in ("'", '"', "\\"))
            elif child.type.endswith("_redirect"):
                self.redirect(child, state, depth=depth, record=True)
            elif child.type == "heredoc_body":
                if not heredoc_quoted:
                    variables.extend(self.heredoc_body(child, state, depth=depth))
            elif child.type in ("heredoc_end", "heredoc_content"):
                continue
            elif name == "destination" or child.is_named:
                target = self.word(child, state, depth=depth)
        op = _HERE_OPS.get(node.type, op)
        if target is not None:
            variables.extend(target.variables)
        redirect = Redirect(
            op=op, target=target, fd=fd, cwd=state.cwd, variables=tuple(dict.fromkeys(variables))
        )
        if record:
            self.out.redirects.append(redirect)
        return redirect

    def heredoc_body(self, node: Node, state: State, *, depth: int) -> list[str]:
        """Walk an unquoted here-document's substitutions and expansions; returns the
        variables it expands."""
        for part in outer(node):
            if part.type in ("command_substitution", "process_substitution"):
                self.substitution(part, state, depth=depth)
            elif part.type in ("expansion", "arithmetic_expansion"):
                self.expansion_check(part)
        return list(self.variables(node))

    def substitution(self, node: Node, state: State, *, depth: int) -> None:
        sub_state = State(cwd=state.cwd)
        self.check_gaps(node, newlines=True)
        for child in node.named_children:
            self.statement(child, sub_state, depth=depth + 1)

    def expansion_check(self, node: Node) -> None:
        """``${...}`` forms that can run code or assign: ``${x@P}``, ``${x:=v}``, ``${!x}``,
        subscripts; plain ``${x}`` and text operators are fine."""
        children = node.children
        inner = [c for c in children if c.type not in ("${", "}")]
        if not inner:
            return
        first = inner[0]
        if first.type in ("#", "!") and len(inner) > 1:
            if first.type == "!":
                self.unsafe("indirect expansion ${!x} can evaluate array subscripts")
                return
            inner = inner[1:]
            first = inner[0]
        if first.type == "subscript":
            index = first.child_by_field_name("index")
            if index is None or (
                self.text(index) not in ("@", "*") and not self.text(index).isdigit()
            ):
                self.unsafe("an array subscript is evaluated as arithmetic")
                return
        elif first.type not in ("variable_name", "special_variable_name"):
            self.unsafe(f"unusual parameter expansion {self.text(node)!r}")
            return
        for child in inner[1:]:
            if not child.is_named:
                if child.type not in SAFE_EXPANSION_OPERATORS:
                    self.unsafe(
                        f"parameter expansion operator {child.type!r} can assign or run code"
                    )
                    return
            elif child.type in ("command_substitution", "process_substitution"):
                continue
            elif child.type in ("arithmetic_expansion",):
                self.arith_node(child)

    # -- words ---------------------------------------------------------------------------------

    def word(self, node: Node, state: State, *, depth: int) -> Word:
        """The :class:`Word` for an argument node (analysing nested substitutions)."""
        source = self.text(node)
        value, why, glob, skeleton = assemble(node, self.text)
        self.nested(node, state, depth=depth)
        if re.search(r"\{[^{}]*(,|\.\.)[^{}]*\}", skeleton):
            why.append("brace expansion")
        if not why and value.startswith("~") and source.startswith("~"):
            head, sep, rest = value.partition("/")
            if head == "~":
                value = str(self.home) + (sep + rest if sep else "")
            else:
                why.append("~user expansion")
        variables = self.variables(node)
        if why:
            expansion = expand_braces(source) if all(w == "brace expansion" for w in why) else None
            return Word(
                value=None,
                source=source,
                glob=glob,
                why=why[0],
                variables=variables,
                expansion=expansion,
            )
        return Word(value=value, source=source, glob=glob, variables=variables)

    def nested(self, node: Node, state: State, *, depth: int) -> None:
        """Walk the substitutions and judge the expansions inside a word."""
        for node_ in [node, *outer(node)]:
            if node_.type in ("command_substitution", "process_substitution"):
                self.substitution(node_, state, depth=depth)
            elif node_.type == "expansion":
                self.expansion_check(node_)
            elif node_.type == "arithmetic_expansion":
                self.arith_node(node_)

    def variables(self, node: Node) -> tuple[str, ...]:
        """Names of the variables ``node`` expands (``$x``, ``${x}``, ``${x:-y}``...), not
        counting nested command substitutions (their commands are judged on their own)."""
        names: list[str] = []
        if node.type in ("command_substitution", "process_substitution"):
            return ()
        for child in [node, *outer(node)]:
            parent = child.parent
            if (
                child.type in ("variable_name", "special_variable_name")
                and parent is not None
                and parent.type in ("simple_expansion", "expansion", "subscript")
            ):
                names.append(self.text(child))
        return tuple(dict.fromkeys(names))


_HERE_OPS = MappingProxyType({"heredoc_redirect": "<<", "herestring_redirect": "<<<"})
"""Redirect node types whose operator is implied by the node."""

_PUNCTUATION = frozenset(
    {"comment", ";", "&", "&&", "||", "|", "|&", "\n", "(", ")", "{", "}", "do", "done"}
)
"""Statement-level tokens with nothing to judge."""

_Handler = Callable[[Walker, "Node", State, int], None]

_STATEMENTS: Mapping[str, _Handler] = MappingProxyType(
    {
        "program": Walker._block,
        "compound_statement": Walker._block,
        "do_group": Walker._block,
        "list": Walker._list,
        "pipeline": Walker._pipeline,
        "subshell": Walker._subshell,
        "redirected_statement": Walker._redirected,
        "command": Walker._command,
        "negated_command": Walker._negated,
        **dict.fromkeys(
            ("if_statement", "elif_clause", "else_clause", "case_statement", "case_item"),
            Walker._conditional,
        ),
        "while_statement": Walker._loop,
        "for_statement": Walker._loop,
        "c_style_for_statement": Walker._c_style_for,
        "test_command": Walker._test,
        "variable_assignment": Walker._assignment,
        "variable_assignments": Walker._assignment,
        "declaration_command": Walker._declaration,
        "unset_command": Walker._unset,
        "function_definition": Walker._function,
    }
)
"""Statement node type → its handler (``handler(walker, node, state, depth)``)."""
