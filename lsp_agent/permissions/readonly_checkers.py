"""The per-command checkers of the read-only proof: each gets the arguments after the command
name and returns a :class:`~lsp_agent.permissions.verdict.Verdict` (see
:mod:`lsp_agent.permissions.readonly` for what read-only means). Generic shapes
(:func:`reader`, :func:`version_only`, :func:`wrapper`) build checkers from a table; the rest
know one program. Option tables live in :mod:`lsp_agent.permissions.readonly_tables`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lsp_agent.permissions.getopt import Options, parse_options
from lsp_agent.permissions.readonly_tables import (
    AWK_TABLE,
    AWK_UNSAFE,
    DATE_TABLE,
    DIFF_TABLE,
    DU_TABLE,
    FD_TABLE,
    FILE_TABLE,
    FIND_UNSAFE,
    GREP_TABLE,
    HOSTNAME_TABLE,
    JQ_FILE_OPTIONS,
    JQ_FLAGS,
    JQ_LONG_FLAGS,
    JQ_NAMED_ARGS,
    JQ_UNSAFE,
    JQ_VALUE_OPTIONS,
    LS_TABLE,
    PS_VALUE_OPTIONS,
    RG_TABLE,
    SAFE_ENV_ASSIGNMENTS,
    SED_TABLE,
    SORT_TABLE,
    STRINGS_TABLE,
    TREE_TABLE,
    UNIQ_TABLE,
    USERS_TABLE,
    WHO_TABLE,
    XARGS_SAFE_TARGETS,
    XARGS_TABLE,
    XXD_LONG,
    XXD_TABLE,
)
from lsp_agent.permissions.sed_script import sed_script_check
from lsp_agent.permissions.verdict import Checker, Context, Verdict, no, yes

ENV_DUMP = (
    "prints the environment variables, which may hold secrets such as API keys "
    "(like reading /proc/self/environ)"
)


def any_args(args: Sequence[str], ctx: Context) -> Verdict:
    return yes()


def refuse(reason: str) -> Checker:
    def check(args: Sequence[str], ctx: Context) -> Verdict:
        return no(reason)

    return check


def reader(table: Options) -> Checker:
    """A command whose operands (and ``read`` option values) are files it reads."""

    def check(args: Sequence[str], ctx: Context) -> Verdict:
        parsed = parse_options(args, table)
        return yes(reads=[*parsed.positionals, *parsed.reads])

    return check


def version_only(*accepted: str) -> Checker:
    allowed = {tuple(a.split()) for a in accepted}

    def check(args: Sequence[str], ctx: Context) -> Verdict:
        if tuple(args) in allowed:
            return yes()
        return no("it can run code or change files (only its version query is known to be safe)")

    return check


def check_printf(args: Sequence[str], ctx: Context) -> Verdict:
    if args and args[0].startswith("-v"):
        return no("printf -v assigns a variable")
    return yes()


def check_test(args: Sequence[str], ctx: Context) -> Verdict:
    if "-v" in args:
        return no("test -v evaluates array subscripts")
    return yes()


def check_date(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, DATE_TABLE)
    if any(not p.startswith("+") for p in parsed.positionals):
        return no("date with an argument sets the clock")
    return yes(reads=parsed.reads)


def check_hostname(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, HOSTNAME_TABLE)
    return no("hostname NAME sets the host name") if parsed.positionals else yes()


def check_set(args: Sequence[str], ctx: Context) -> Verdict:
    if not args:
        return no(f"set without arguments {ENV_DUMP}")
    names = {"pipefail", "errexit", "nounset", "xtrace", "verbose"}
    i = 0
    while i < len(args):
        arg = args[i]
        if not re.fullmatch(r"[-+][euxv]*o?", arg) or arg in ("-", "+"):
            return no("set with these arguments changes shell state")
        if arg.endswith("o"):
            if i + 1 >= len(args) or args[i + 1] not in names:
                return no("set -o with this option changes how the shell runs commands")
            i += 1
        i += 1
    return yes()


def check_cd(args: Sequence[str], ctx: Context) -> Verdict:
    # The walk already moved the working directory; cd itself reads nothing.
    return yes()


def check_who(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, WHO_TABLE)
    # ``who am i`` (two operands) is the current terminal; one operand is a utmp file to read.
    if len(parsed.positionals) == 1:
        return yes(reads=parsed.positionals)
    if len(parsed.positionals) > 2:
        return no("who takes a file or 'am i'")
    return yes()


def check_users(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, USERS_TABLE)
    return yes(reads=parsed.positionals)


def check_ps(args: Sequence[str], ctx: Context) -> Verdict:
    """``ps`` is read-only unless it shows processes' environments: the BSD-style ``e``
    modifier (``ps eww``, ``ps auxe``), ``-E`` on macOS, and ``-e`` on BSD systems."""
    bsd = not ctx.platform.startswith("linux")
    parsed = parse_options(args, PS_VALUE_OPTIONS)
    for name, _value in parsed.options:
        letters = name[1:] if not name.startswith("--") else ""
        if "E" in letters or (bsd and "e" in letters):
            return no(f"ps {name} {ENV_DUMP}")
    for word in parsed.positionals:
        # BSD-style options have no dash: ``ps aux``, ``ps e``.
        if re.fullmatch(r"[A-Za-z]+", word) and "e" in word:
            return no(f"ps {word} {ENV_DUMP}")
    return yes()


def check_grep(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, GREP_TABLE)
    positionals = parsed.positionals
    if not parsed.has("-e", "--regexp", "-f", "--file"):
        if not positionals:
            return no("grep without a pattern")
        positionals = positionals[1:]
    recursive = parsed.has("-r", "--recursive") or "recurse" in parsed.values("-d", "--directories")
    return yes(reads=[*positionals, *parsed.reads], reads_cwd=recursive and not positionals)


def check_rg(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, RG_TABLE)
    positionals = parsed.positionals
    files_mode = parsed.has("--files", "--type-list", "--version", "-V", "--help", "-h")
    if not files_mode and not parsed.has("-e", "--regexp", "-f", "--file"):
        if not positionals:
            return no("rg without a pattern")
        positionals = positionals[1:]
    return yes(reads=[*positionals, *parsed.reads], reads_cwd=not positionals)


def check_find(args: Sequence[str], ctx: Context) -> Verdict:
    i = 0
    while (i < len(args) and args[i] in ("-H", "-P", "-D", "-O")) or (
        i < len(args) and re.fullmatch(r"-O\d", args[i])
    ):
        if args[i] == "-D":
            i += 1
        i += 1
    if any(a in {"-L", "-follow"} for a in args):
        return no("find -L follows symbolic links out of the workspace")
    starts: list[str] = []
    while i < len(args) and not args[i].startswith(("-", "(", "!", ")")) and args[i] != ",":
        starts.append(args[i])
        i += 1
    for arg in args[i:]:
        if arg in FIND_UNSAFE:
            return no(f"find {arg} runs programs, writes files or reads names from a file")
    return yes(reads=starts, reads_cwd=not starts)


def check_fd(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, FD_TABLE)
    paths = parsed.positionals[1:] + parsed.values("--search-path", "--base-directory")
    return yes(reads=[*paths, *parsed.reads], reads_cwd=not paths)


def check_sed(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, SED_TABLE)
    scripts = parsed.values("-e", "--expression")
    files = parsed.positionals
    if not scripts:
        if not files:
            return no("sed without a script")
        scripts, files = [files[0]], files[1:]
    reads: list[str] = list(files)
    for script in scripts:
        problem, script_reads = sed_script_check(script)
        if problem:
            return no(f"sed script: {problem}")
        reads.extend(script_reads)
    return yes(reads=reads)


def check_awk(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, AWK_TABLE)
    if not parsed.positionals:
        return no("awk without a program")
    program, files = parsed.positionals[0], parsed.positionals[1:]
    if AWK_UNSAFE.search(program):
        return no("the awk program runs commands, reads the environment or other input")
    if re.search(r"(?<!\|)\|(?!\|)", program):
        return no("the awk program pipes to a command")
    if re.search(r"\bprintf?\b[^;{}]*>", program):
        return no("the awk program may redirect output to a file")
    return yes(reads=[f for f in files if "=" not in f])


def check_uniq(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, UNIQ_TABLE)
    if len(parsed.positionals) > 1:
        return no("uniq's second argument is an output file")
    return yes(reads=parsed.positionals)


def check_sort(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, SORT_TABLE)
    return yes(reads=[*parsed.positionals, *parsed.reads])


def check_xxd(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options([XXD_LONG.get(a, a) for a in args], XXD_TABLE)
    if len(parsed.positionals) > 1:
        return no("xxd's second argument is an output file")
    return yes(reads=parsed.positionals)


def check_tree(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, TREE_TABLE)
    return yes(reads=[*parsed.positionals, *parsed.reads], reads_cwd=not parsed.positionals)


def check_file(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, FILE_TABLE)
    # ``-m`` takes a colon-separated list of magic files.
    magic = [part for value in parsed.reads for part in value.split(":") if part]
    return yes(reads=[*parsed.positionals, *magic])


def head_tail(table: Options) -> Checker:
    def check(args: Sequence[str], ctx: Context) -> Verdict:
        parsed = parse_options(args, table)
        return yes(reads=parsed.positionals)

    return check


def check_ls(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, LS_TABLE)
    if parsed.has("-R", "--recursive") and parsed.has("-L", "--dereference"):
        return no("ls -RL follows symbolic links out of the workspace")
    return yes(reads=parsed.positionals, reads_cwd=not parsed.positionals)


def check_du(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, DU_TABLE)
    return yes(reads=[*parsed.positionals, *parsed.reads], reads_cwd=not parsed.positionals)


def check_diff(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, DIFF_TABLE)
    if parsed.has("-r", "--recursive") and not parsed.has("--no-dereference"):
        return no("diff -r follows symbolic links out of the workspace (add --no-dereference)")
    return yes(reads=[*parsed.positionals, *parsed.reads])


def wrapper(table: Options, *, skip: int = 0, name: str) -> Checker:
    """``timeout 5 CMD``, ``nice CMD``...: read-only when CMD is."""

    def check(args: Sequence[str], ctx: Context) -> Verdict:
        parsed = parse_options(args, table)
        rest = parsed.positionals[skip:]
        if not rest:
            return yes() if name in ("nice", "time") else no(f"{name} without a command")
        return Verdict(ok=True, inner=tuple(rest))

    return check


def check_env(args: Sequence[str], ctx: Context) -> Verdict:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-i", "--ignore-environment", "-0", "--null", "-"):
            i += 1
        elif args[i] in ("-u", "--unset"):
            i += 2
        else:
            return no(f"env {args[i]} is not known to be safe")
    while i < len(args) and "=" in args[i]:
        name = args[i].split("=", 1)[0]
        if name not in SAFE_ENV_ASSIGNMENTS:
            return no(f"env sets {name}, which can change what programs do")
        i += 1
    if i >= len(args):
        return no(f"env without a command {ENV_DUMP}")
    return Verdict(ok=True, inner=tuple(args[i:]))


def check_command(args: Sequence[str], ctx: Context) -> Verdict:
    rest = list(args)
    while rest and rest[0] == "-p":
        rest.pop(0)
    if rest and rest[0] in ("-v", "-V"):
        return yes()
    if not rest:
        return yes()
    return Verdict(ok=True, inner=tuple(rest))


def check_xargs(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, XARGS_TABLE)
    inner = parsed.positionals or ["echo"]
    if inner[0] not in XARGS_SAFE_TARGETS:
        return no(
            f"xargs {inner[0]} gets its arguments (possibly paths outside the workspace) from input"
        )
    return Verdict(ok=True, inner=tuple(inner))


def check_strings(args: Sequence[str], ctx: Context) -> Verdict:
    """binutils reads more options from ``@FILE`` operands: those files are reads too."""
    parsed = parse_options(args, STRINGS_TABLE)
    reads = [p[1:] if p.startswith("@") and len(p) > 1 else p for p in parsed.positionals]
    return yes(reads=reads)


def check_jq(args: Sequence[str], ctx: Context) -> Verdict:
    """jq matches options exactly (no abbreviations); short flags may be combined. The first
    operand is the program, the others input files (or program arguments after ``--args``)."""
    state = _JqArgs()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            for operand in args[i + 1 :]:
                state.operand(operand)
            break
        if arg.startswith("--"):
            used = _jq_long(args, i, state)
        elif arg.startswith("-") and arg != "-":
            used = _jq_short(arg)
        else:
            state.operand(arg)
            used = 1
        if isinstance(used, Verdict):
            return used
        i += used
    if state.program is not None and JQ_UNSAFE.search(state.program):
        return no("the jq program reads the environment (env, $ENV) or loads modules")
    return yes(reads=[*state.reads, *state.inputs])


class _JqArgs:
    """What jq's arguments say so far: the program, input files, files read by options."""

    def __init__(self) -> None:
        self.program: str | None = None
        self.inputs: list[str] = []
        self.reads: list[str] = []
        self.named_args = False

    def operand(self, arg: str) -> None:
        if self.program is None:
            self.program = arg
        elif not self.named_args:
            self.inputs.append(arg)


_JQ_PROGRAM_FILE = "the jq program comes from a file and may print the environment"


def _jq_long(args: Sequence[str], i: int, state: _JqArgs) -> int | Verdict:
    """How many arguments the long option ``args[i]`` uses, or why it is not read-only."""
    arg = args[i]
    values = JQ_VALUE_OPTIONS.get(arg)
    if values is not None:
        if values == 2 and i + 2 >= len(args):
            return no(f"jq {arg} needs a name and a value")
        if arg in JQ_FILE_OPTIONS:
            state.reads.append(args[i + 2])
        return 1 + values
    if arg in JQ_NAMED_ARGS:
        state.named_args = True
    elif arg == "--from-file":
        return no(f"jq --from-file: {_JQ_PROGRAM_FILE}")
    elif arg not in JQ_LONG_FLAGS:
        return no(f"jq: unknown option {arg}")
    return 1


def _jq_short(arg: str) -> int | Verdict:
    """How many arguments the short option cluster ``arg`` uses (``-L DIR`` two), or why it is
    not read-only."""
    letters = arg[1:]
    if letters.startswith("L"):
        return 1 if len(letters) > 1 else 2
    for letter in letters:
        if letter == "f":
            return no(f"jq -f: {_JQ_PROGRAM_FILE}")
        if letter not in JQ_FLAGS:
            return no(f"jq: unknown option -{letter}")
    return 1
