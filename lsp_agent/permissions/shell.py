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
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_COMMAND_CHARS = 100_000
"""Longer command strings are not analysed (the caller asks)."""

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


@dataclass(frozen=True, kw_only=True)
class Word:
    """One shell word. ``value`` is its literal text after quote removal and ``~`` expansion,
    or ``None`` when it is dynamic; ``glob`` says it has unquoted ``*``/``?`` (``value`` then
    holds the pattern); ``source`` is the text as written; ``why`` says why it is dynamic;
    ``variables`` names the shell variables it expands (outside nested substitutions)."""

    value: str | None
    source: str
    glob: bool = False
    why: str | None = None
    variables: tuple[str, ...] = ()


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


@dataclass(kw_only=True)
class _State:
    """The walk's view of the shell: the current directory (``None`` = unknown)."""

    cwd: Path | None


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
        walker = _Walker(source=source, analyzer=self, out=result)
        walker.statement(tree.root_node, _State(cwd=cwd), depth=0)
        return result


class _Walker:
    def __init__(self, *, source: bytes, analyzer: ShellAnalyzer, out: Analysis) -> None:
        self.src = source
        self.az = analyzer
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

    def statement(self, node: Node, state: _State, *, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.problem("the command is nested too deeply")
            return
        kind = node.type
        if node.is_error or node.is_missing or kind == "ERROR":
            self.problem(f"bash syntax error near {self.text(node)[:40]!r}")
            return
        if kind in ("program", "compound_statement", "do_group"):
            if kind == "compound_statement" and node.child_count and node.children[0].type == "((":
                self.arithmetic(node)
                return
            self.check_gaps(node, newlines=True)
            self.sequence(node.children, state, depth=depth)
        elif kind == "list":
            self.check_gaps(node, newlines=True)
            self.list_(node, state, depth=depth)
        elif kind == "pipeline":
            self.check_gaps(node, newlines=True)
            for child in node.children:
                if child.is_named:
                    self.statement(child, _State(cwd=state.cwd), depth=depth + 1)
        elif kind == "subshell":
            self.check_gaps(node, newlines=True)
            self.sequence(node.children, _State(cwd=state.cwd), depth=depth)
        elif kind == "redirected_statement":
            self.check_gaps(node, newlines=True)
            for index, child in enumerate(node.children):
                if node.field_name_for_child(index) == "redirect":
                    self.redirect(child, state, depth=depth)
                elif child.is_named:
                    self.statement(child, state, depth=depth + 1)
        elif kind == "command":
            self.command(node, state, depth=depth)
        elif kind == "negated_command":
            for child in node.named_children:
                self.statement(child, state, depth=depth + 1)
        elif kind in ("if_statement", "elif_clause", "else_clause", "case_statement", "case_item"):
            self.conditional(node, state, depth=depth)
        elif kind in ("while_statement", "for_statement"):
            self.loop(node, state, depth=depth)
        elif kind == "c_style_for_statement":
            self.unsafe("a C-style for loop evaluates arithmetic")
            self.loop(node, state, depth=depth)
        elif kind == "test_command":
            self.test_command(node, state, depth=depth)
        elif kind in ("variable_assignment", "variable_assignments"):
            self.unsafe("it assigns shell variables, which changes how later commands run")
            self.walk_words(node, state, depth=depth)
        elif kind == "declaration_command":
            self.unsafe(f"{self.text(node).split()[0]} changes shell variables")
            self.walk_words(node, state, depth=depth)
        elif kind == "unset_command":
            self.unsafe("unset changes shell variables")
        elif kind == "function_definition":
            self.unsafe("it defines a shell function")
            self.walk_words(node, state, depth=depth)
        elif kind == "comment" or kind in (
            ";",
            "&",
            "&&",
            "||",
            "|",
            "|&",
            "\n",
            "(",
            ")",
            "{",
            "}",
            "do",
            "done",
        ):
            return
        else:
            self.problem(f"unsupported shell construct: {kind}")

    def sequence(self, children: list[Node], state: _State, *, depth: int) -> None:
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

    def list_(self, node: Node, state: _State, *, depth: int) -> None:
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

    def conditional(self, node: Node, state: _State, *, depth: int) -> None:
        if self.contains_cd(node):
            # Which branch ran (and whether its ``cd`` worked) is not known.
            state.cwd = None
        for index, child in enumerate(node.children):
            name = node.field_name_for_child(index)
            if name == "value" or child.type in ("word", "string", "raw_string", "concatenation"):
                self.word(child, state, depth=depth)
            elif child.is_named:
                self.statement(child, state, depth=depth + 1)

    def loop(self, node: Node, state: _State, *, depth: int) -> None:
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

    def test_command(self, node: Node, state: _State, *, depth: int) -> None:
        text = self.text(node)
        has_expansion = any(
            n.type in ("simple_expansion", "expansion", "command_substitution")
            for n in _descendants(node)
        )
        if _ARITH_OPS.search(text) and has_expansion:
            self.unsafe("[[ ... -eq ... ]] evaluates expanded text as arithmetic")
        if re.search(r"(^|\s)-v\s", text):
            self.unsafe("[[ -v ]] evaluates array subscripts")
        for child in _outer(node):
            if child.type in ("command_substitution", "process_substitution"):
                self.substitution(child, state, depth=depth)

    def arithmetic(self, node: Node) -> None:
        self.arith_node(node)

    def arith_node(self, node: Node) -> None:
        for child in _descendants(node):
            if child.type in (
                "variable_name",
                "subscript",
                "command_substitution",
                "simple_expansion",
                "expansion",
            ):
                self.unsafe("arithmetic on variables can run code (array subscripts)")
                return

    def walk_words(self, node: Node, state: _State, *, depth: int) -> None:
        """Analyse substitutions nested anywhere below ``node`` (for statements whose own
        effect is already judged unsafe)."""
        for child in _outer(node):
            if child.type in ("command_substitution", "process_substitution"):
                self.substitution(child, state, depth=depth)

    # -- commands ------------------------------------------------------------------------------

    def command(self, node: Node, state: _State, *, depth: int) -> None:
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
            return self.az.home if cmd.name == "cd" else None
        target = values[0]
        if target == "-" or len(values) > 1:
            return None
        if (
            self.az.cdpath
            and not target.startswith(("/", "./", "../"))
            and target not in (".", "..")
        ):
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

    def redirect(self, node: Node, state: _State, *, depth: int, record: bool = True) -> Redirect:
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
                    variables.extend(self.variables(child))
                    for part in _outer(child):
                        if part.type in ("command_substitution", "process_substitution"):
                            self.substitution(part, state, depth=depth)
                        elif part.type in ("expansion", "arithmetic_expansion"):
                            self.expansion_check(part)
            elif child.type in ("heredoc_end", "heredoc_content"):
                continue
            elif name == "destination" or child.is_named:
                target = self.word(child, state, depth=depth)
        if node.type == "heredoc_redirect":
            op = "<<"
        elif node.type == "herestring_redirect":
            op = "<<<"
        if target is not None:
            variables.extend(target.variables)
        redirect = Redirect(
            op=op, target=target, fd=fd, cwd=state.cwd, variables=tuple(dict.fromkeys(variables))
        )
        if record:
            self.out.redirects.append(redirect)
        return redirect

    def substitution(self, node: Node, state: _State, *, depth: int) -> None:
        sub_state = _State(cwd=state.cwd)
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

    def word(self, node: Node, state: _State, *, depth: int) -> Word:
        """The :class:`Word` for an argument node (analysing nested substitutions)."""
        source = self.text(node)
        parts: list[str] = []
        why: list[str] = []
        glob = False
        skeleton: list[str] = []
        for piece_type, piece in self.pieces(node):
            if piece_type == "literal":
                parts.append(piece)
                skeleton.append("Q")
            elif piece_type == "unquoted":
                value, has_glob, bad = _unquote_word(piece)
                if bad:
                    why.append(bad)
                glob = glob or has_glob
                parts.append(value)
                skeleton.append(re.sub(r"\\.", "E", piece, flags=re.DOTALL))
            else:
                why.append(piece)
                skeleton.append("D")
        for node_ in [node, *_outer(node)]:
            if node_.type in ("command_substitution", "process_substitution"):
                self.substitution(node_, state, depth=depth)
            elif node_.type == "expansion":
                self.expansion_check(node_)
            elif node_.type == "arithmetic_expansion":
                self.arith_node(node_)
        if re.search(r"\{[^{}]*(,|\.\.)[^{}]*\}", "".join(skeleton)):
            why.append("brace expansion")
        value = "".join(parts)
        if not why and value.startswith("~") and source.startswith("~"):
            head, sep, rest = value.partition("/")
            if head == "~":
                value = str(self.az.home) + (sep + rest if sep else "")
            else:
                why.append("~user expansion")
        variables = self.variables(node)
        if why:
            return Word(value=None, source=source, glob=glob, why=why[0], variables=variables)
        return Word(value=value, source=source, glob=glob, variables=variables)

    def variables(self, node: Node) -> tuple[str, ...]:
        """Names of the variables ``node`` expands (``$x``, ``${x}``, ``${x:-y}``...), not
        counting nested command substitutions (their commands are judged on their own)."""
        names: list[str] = []
        if node.type in ("command_substitution", "process_substitution"):
            return ()
        for child in [node, *_outer(node)]:
            parent = child.parent
            if (
                child.type in ("variable_name", "special_variable_name")
                and parent is not None
                and parent.type in ("simple_expansion", "expansion", "subscript")
            ):
                names.append(self.text(child))
        return tuple(dict.fromkeys(names))

    def pieces(self, node: Node) -> Iterator[tuple[str, str]]:
        """Yield ``("literal", text)``, ``("unquoted", raw)`` or ``("dynamic", why)``."""
        kind = node.type
        if kind in ("word", "number"):
            yield ("unquoted", self.text(node))
        elif kind == "raw_string":
            yield ("literal", self.text(node)[1:-1])
        elif kind in ("string", "translated_string"):
            for child in node.children:
                if child.type == "string_content":
                    value, bad = _unescape_double(self.text(child))
                    if bad:
                        yield ("dynamic", bad)
                    else:
                        yield ("literal", value)
                elif child.type in ('"', '$"', "$"):
                    continue
                elif child.type in ("simple_expansion", "expansion"):
                    yield ("dynamic", "parameter expansion")
                elif child.type == "command_substitution":
                    yield ("dynamic", "command substitution")
                elif child.type == "arithmetic_expansion":
                    yield ("dynamic", "arithmetic expansion")
                else:
                    yield ("dynamic", f"{child.type} in a string")
        elif kind == "ansi_c_string":
            decoded = _ansi_c(self.text(node)[2:-1])
            if decoded is None:
                yield ("dynamic", "unusual $'...' escape")
            else:
                yield ("literal", decoded)
        elif kind == "concatenation":
            for child in node.children:
                yield from self.pieces(child)
        elif kind in ("simple_expansion", "expansion"):
            yield ("dynamic", "parameter expansion")
        elif kind == "command_substitution":
            yield ("dynamic", "command substitution")
        elif kind == "process_substitution":
            # The command sees a pipe's name; what runs inside is analysed on its own.
            yield ("literal", "/dev/fd/63")
        elif kind == "arithmetic_expansion":
            yield ("dynamic", "arithmetic expansion")
        elif kind == "brace_expression":
            yield ("dynamic", "brace expansion")
        else:
            yield ("dynamic", f"{kind} word")


def _outer(node: Node) -> Iterator[Node]:
    """Descendants of ``node`` without entering command or process substitutions (their
    insides are walked as statements of their own)."""
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        yield current
        if current.type not in ("command_substitution", "process_substitution"):
            stack.extend(reversed(current.children))


def _descendants(node: Node) -> Iterator[Node]:
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _unquote_word(text: str) -> tuple[str, bool, str | None]:
    """Quote removal for an unquoted word: ``(value, has_glob, problem)``."""
    out: list[str] = []
    glob = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            if i + 1 >= len(text):
                return "".join(out), glob, "a trailing backslash"
            nxt = text[i + 1]
            if nxt in "\r\n":
                return "".join(out), glob, "a backslash-newline inside a word"
            out.append(nxt)
            i += 2
            continue
        if ch in "*?":
            glob = True
        elif ch == "[":
            return "".join(out), glob, "a [...] glob pattern"
        elif ch in "\r":
            return "".join(out), glob, "a carriage return inside a word"
        elif ch == "$":
            return "".join(out), glob, "a $ the parser did not expand"
        elif ch == "`":
            return "".join(out), glob, "a backquote the parser did not expand"
        out.append(ch)
        i += 1
    return "".join(out), glob, None


def _unescape_double(text: str) -> tuple[str, str | None]:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "\n":
                i += 2
                continue
            if nxt in '$`"\\':
                out.append(nxt)
                i += 2
                continue
        if ch in "$`":
            return "".join(out), "an expansion inside double quotes"
        out.append(ch)
        i += 1
    return "".join(out), None


_ANSI_SIMPLE = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "e": "\x1b",
    "E": "\x1b",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c(body: str) -> str | None:
    """Decode the body of ``$'...'``; ``None`` for escapes this decoder does not know."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(body):
            return None
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
        elif nxt == "x":
            m = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2 :])
            if not m:
                return None
            out.append(chr(int(m.group(), 16)))
            i += 2 + len(m.group())
        elif nxt in "uU":
            m = re.match(rf"[0-9A-Fa-f]{{1,{4 if nxt == 'u' else 8}}}", body[i + 2 :])
            if not m:
                return None
            out.append(chr(int(m.group(), 16)))
            i += 2 + len(m.group())
        elif nxt in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert m is not None
            out.append(chr(int(m.group(), 8) & 0xFF))
            i += 1 + len(m.group())
        else:
            return None
    value = "".join(out)
    return None if "\x00" in value else value
