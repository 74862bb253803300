"""Which simple commands are provably read-only, flag by flag.

:func:`check_read_only` looks at one command's literal argv (globs already expanded) and says
whether it only reads — no file written, no program run on its behalf — and which paths it reads
(so the engine can keep reads inside the roots). It knows common developer commands and their
dangerous options, for example:

- ``sed`` without ``-i`` and whose script has no ``w``/``W``/``e`` commands or ``s///w``/``e``
  flags (the script is tokenised, not grepped);
- ``find`` without ``-exec``/``-execdir``/``-ok``/``-delete``/``-fprint*``/``-fls``;
- ``rg`` without ``--pre``/``--search-zip``/``--hostname-bin``; ``sort`` without ``-o`` or
  ``--compress-program``; ``uniq``/``xxd`` without an output file; ``tree`` without ``-o``;
- ``git`` read-only sub-commands (``status``, ``log``, ``diff``, ``show``, listing forms of
  ``branch``/``tag``/``remote``/``config``/``stash``...) without ``-c``, ``--output``,
  ``--ext-diff`` or ``--open-files-in-pager``; only in a trusted workspace (a repository's
  ``.git/config`` can make git run programs).

GNU long options may be abbreviated (``sort --out=f`` is ``--output``): an option that is a
prefix of a dangerous one counts as dangerous. Anything not in these tables is not read-only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

SAFE_ENV_ASSIGNMENTS = frozenset(
    {
        "LC_ALL",
        "LANG",
        "LANGUAGE",
        "LC_CTYPE",
        "LC_COLLATE",
        "LC_MESSAGES",
        "TZ",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "COLUMNS",
        "LINES",
        "TERM",
    }
)
"""Variables a prefix assignment may set without losing read-only status."""

DYNAMIC_ARGS_OK = frozenset({"echo", "printf", "true", "false", ":", "test", "[", "exit"})
"""Commands whose arguments may contain expansions (their arguments are never paths or options
that write)."""


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """Whether a command is read-only. ``reason`` says why not; ``reads`` are the path
    arguments it reads (as written, relative to its directory); ``reads_cwd`` says it reads its
    working directory implicitly; ``chdir`` is a directory it works in instead (``git -C``);
    ``inner`` is the command a wrapper runs (checked too); ``cd`` marks a directory change."""

    ok: bool
    reason: str = ""
    reads: tuple[str, ...] = ()
    reads_cwd: bool = False
    chdir: str | None = None
    inner: tuple[str, ...] | None = None


def no(reason: str) -> Verdict:
    """A not-read-only verdict."""
    return Verdict(ok=False, reason=reason)


def yes(*, reads: Sequence[str] = (), reads_cwd: bool = False, chdir: str | None = None) -> Verdict:
    """A read-only verdict."""
    return Verdict(ok=True, reads=tuple(reads), reads_cwd=reads_cwd, chdir=chdir)


@dataclass(frozen=True, kw_only=True)
class Options:
    """An option table for :func:`parse_options`. ``with_arg`` options take a value;
    ``unsafe`` options write or run programs; with ``only`` set, any other option is unsafe;
    ``posix`` stops option parsing at the first positional."""

    with_arg: frozenset[str] = frozenset()
    unsafe: frozenset[str] = frozenset()
    only: frozenset[str] | None = None
    posix: bool = False


def opts(
    with_arg: str = "", unsafe: str = "", only: str | None = None, posix: bool = False
) -> Options:
    """Build :class:`Options` from space-separated option lists."""
    return Options(
        with_arg=frozenset(with_arg.split()),
        unsafe=frozenset(unsafe.split()),
        only=frozenset(only.split()) if only is not None else None,
        posix=posix,
    )


@dataclass(frozen=True, kw_only=True)
class Parsed:
    """Options found (name, value) in order and the positional arguments."""

    options: list[tuple[str, str | None]]
    positionals: list[str]

    def has(self, *names: str) -> bool:
        """Whether any of ``names`` was given."""
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[str]:
        """The values of the given options."""
        return [v for n, v in self.options if n in names and v is not None]


class UnsafeError(Exception):
    """Raised by :func:`parse_options` for an unsafe or unknown option."""


def parse_options(args: Sequence[str], table: Options) -> Parsed:
    """Split ``args`` into options and positionals using ``table``; raises :class:`UnsafeError`."""
    options: list[tuple[str, str | None]] = []
    positionals: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            positionals.extend(args[i + 1 :])
            break
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            name = _long_name(name, table)
            if name in table.with_arg and not eq:
                if i + 1 >= len(args):
                    raise UnsafeError(f"{name} needs a value")
                value, i = args[i + 1], i + 1
            options.append((name, value if (eq or name in table.with_arg) else None))
        elif arg.startswith("-") and arg != "-":
            j = 1
            while j < len(arg):
                flag = "-" + arg[j]
                _check(flag, table)
                if flag in table.with_arg:
                    rest = arg[j + 1 :]
                    if not rest:
                        if i + 1 >= len(args):
                            raise UnsafeError(f"{flag} needs a value")
                        rest, i = args[i + 1], i + 1
                    options.append((flag, rest))
                    break
                options.append((flag, None))
                j += 1
        else:
            positionals.append(arg)
            if table.posix:
                positionals.extend(args[i + 1 :])
                break
        i += 1
    return Parsed(options=options, positionals=positionals)


def _long_name(name: str, table: Options) -> str:
    known = table.with_arg | table.unsafe | (table.only or frozenset())
    if name in table.unsafe:
        raise UnsafeError(f"{name} writes files or runs programs")
    if name in known:
        _check(name, table)
        return name
    # GNU getopt accepts unambiguous abbreviations of long options.
    if len(name) > 2 and any(u.startswith(name) for u in table.unsafe if u.startswith("--")):
        raise UnsafeError(f"{name} may abbreviate a dangerous option")
    matches = [k for k in table.with_arg if k.startswith(name) and k.startswith("--")]
    if len(matches) == 1:
        return matches[0]
    _check(name, table)
    return name


def _check(flag: str, table: Options) -> None:
    if flag in table.unsafe:
        raise UnsafeError(f"{flag} writes files or runs programs")
    if table.only is not None and flag not in table.only and flag not in table.with_arg:
        raise UnsafeError(f"unknown option {flag}")


Checker = Callable[[Sequence[str], "Context"], Verdict]


@dataclass(frozen=True, kw_only=True)
class Context:
    """What a checker may need: ``trusted`` workspace (git is only read-only there)."""

    trusted: bool


def check_read_only(argv: Sequence[str], *, trusted: bool) -> Verdict:
    """Whether ``argv`` (literal words, globs expanded) only reads; see the module docstring."""
    if not argv:
        return yes()
    name = argv[0]
    if "/" in name:
        return no(f"{name} is a program path, not a known read-only command")
    checker = CHECKERS.get(name)
    if checker is None:
        return no(f"{name} is not a known read-only command")
    try:
        return checker(argv[1:], Context(trusted=trusted))
    except UnsafeError as exc:
        return no(f"{name}: {exc}")


# -- generic shapes ------------------------------------------------------------------------------


def _any_args(args: Sequence[str], ctx: Context) -> Verdict:
    return yes()


def _no_positionals(table: Options) -> Checker:
    def check(args: Sequence[str], ctx: Context) -> Verdict:
        parsed = parse_options(args, table)
        if parsed.positionals:
            return no(f"arguments {parsed.positionals!r} may change state")
        return yes()

    return check


def _reader(table: Options = Options(), *, cwd_if_empty: bool = False) -> Checker:
    """A command whose positionals are files it reads."""

    def check(args: Sequence[str], ctx: Context) -> Verdict:
        parsed = parse_options(args, table)
        reads = [p for p in parsed.positionals if p != "-"]
        return yes(reads=reads, reads_cwd=cwd_if_empty and not parsed.positionals)

    return check


def _max_positionals(table: Options, count: int, why: str) -> Checker:
    def check(args: Sequence[str], ctx: Context) -> Verdict:
        parsed = parse_options(args, table)
        if len(parsed.positionals) > count:
            return no(why)
        return yes(reads=[p for p in parsed.positionals if p != "-"])

    return check


def _version_only(*accepted: str) -> Checker:
    allowed = {tuple(a.split()) for a in accepted}

    def check(args: Sequence[str], ctx: Context) -> Verdict:
        if tuple(args) in allowed:
            return yes()
        return no("only version queries of this program are known to be read-only")

    return check


# -- specific commands ---------------------------------------------------------------------------


def _printf(args: Sequence[str], ctx: Context) -> Verdict:
    if args and args[0].startswith("-v"):
        return no("printf -v assigns a variable")
    return yes()


def _test(args: Sequence[str], ctx: Context) -> Verdict:
    if "-v" in args:
        return no("test -v evaluates array subscripts")
    return yes()


def _date(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(
        args, opts("-d --date -f --file -r --reference -I --iso-8601 --rfc-3339", "-s --set")
    )
    if any(not p.startswith("+") for p in parsed.positionals):
        return no("date with an argument sets the clock")
    return yes(reads=parsed.values("-f", "--file", "-r", "--reference"))


def _hostname(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, opts("", "-F --file -b --boot"))
    return no("hostname NAME sets the host name") if parsed.positionals else yes()


def _set(args: Sequence[str], ctx: Context) -> Verdict:
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


def _cd(args: Sequence[str], ctx: Context) -> Verdict:
    # The walk already moved the working directory; cd itself reads nothing.
    return yes()


def _grep(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        "-e --regexp -f --file -m --max-count -A --after-context -B --before-context -C --context "
        "--include --exclude --exclude-dir --exclude-from --label -d --directories -D --devices "
        "--binary-files --group-separator",
        "-R --dereference-recursive",
    )
    parsed = parse_options(args, table)
    positionals = parsed.positionals
    if not parsed.has("-e", "--regexp", "-f", "--file"):
        if not positionals:
            return no("grep without a pattern")
        positionals = positionals[1:]
    reads = [*positionals, *parsed.values("-f", "--file", "--exclude-from")]
    recursive = parsed.has("-r", "--recursive") or parsed.values("-d", "--directories") == [
        "recurse"
    ]
    return yes(reads=[r for r in reads if r != "-"], reads_cwd=recursive and not positionals)


def _rg(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        "-e --regexp -f --file -g --glob --iglob -t --type -T --type-not --type-add --type-clear "
        "-A --after-context -B --before-context -C --context -m --max-count -d --max-depth "
        "--maxdepth -M --max-columns --max-filesize -j --threads --color --colors -E --encoding "
        "--engine --sort --sortr --field-match-separator --field-context-separator "
        "--path-separator --context-separator -r --replace --ignore-file --dfa-size-limit "
        "--regex-size-limit --generate",
        "--pre --pre-glob -z --search-zip --hostname-bin -L --follow",
    )
    parsed = parse_options(args, table)
    positionals = parsed.positionals
    files_mode = parsed.has("--files", "--type-list", "--version", "-V", "--help", "-h")
    if not files_mode and not parsed.has("-e", "--regexp", "-f", "--file"):
        if not positionals:
            return no("rg without a pattern")
        positionals = positionals[1:]
    reads = [*positionals, *parsed.values("-f", "--file", "--ignore-file")]
    return yes(reads=[r for r in reads if r != "-"], reads_cwd=not positionals)


FIND_UNSAFE = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)


def _find(args: Sequence[str], ctx: Context) -> Verdict:
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
            return no(f"find {arg} runs programs or writes files")
    return yes(reads=starts, reads_cwd=not starts)


def _fd(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        "-e --extension -t --type -E --exclude -d --max-depth --min-depth --exact-depth -S --size "
        "--changed-within --changed-before -o --owner -c --color -j --threads --max-results "
        "--base-directory --path-separator --ignore-file --search-path",
        "-x --exec -X --exec-batch -L --follow",
    )
    parsed = parse_options(args, table)
    paths = parsed.positionals[1:] + parsed.values("--search-path", "--base-directory")
    return yes(reads=paths, reads_cwd=not paths)


def _sed(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        "-e --expression -l --line-length",
        "-i --in-place -f --file",
        only="-n --quiet --silent -E -r --regexp-extended -s --separate -u --unbuffered -z "
        "--null-data --posix --debug --sandbox -b --binary --follow-symlinks",
    )
    parsed = parse_options(args, table)
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
    return yes(reads=[r for r in reads if r != "-"])


def sed_script_check(script: str) -> tuple[str | None, list[str]]:
    """Tokenise a sed script: ``(problem, files_read)``. Problems: ``w``/``W``/``e`` commands,
    ``s`` with ``w``/``e`` flags, unknown commands, unterminated commands."""
    reads: list[str] = []
    i, n = 0, len(script)

    def skip_blank(k: int) -> int:
        while k < n and script[k] in " \t":
            k += 1
        return k

    def delimited(k: int, delim: str) -> int:
        # Return the index after the closing delimiter, honouring backslash escapes.
        while k < n:
            ch = script[k]
            if ch == "\\":
                k += 2
                continue
            if ch == "\n" and delim != "\n":
                return -1
            if ch == delim:
                return k + 1
            k += 1
        return -1

    def address(k: int) -> int:
        if k < n and script[k].isdigit():
            while k < n and (script[k].isdigit() or script[k] == "~"):
                k += 1
        elif k < n and script[k] == "$":
            k += 1
        elif k < n and script[k] in "/\\":
            delim = "/"
            if script[k] == "\\":
                if k + 1 >= n:
                    return -1
                delim, k = script[k + 1], k + 1
            k = delimited(k + 1, delim)
            if k < 0:
                return -1
            while k < n and script[k] in "IM":
                k += 1
        return k

    while i < n:
        i = skip_blank(i)
        if i >= n:
            break
        if script[i] in ";\n}":
            i += 1
            continue
        start = i
        i = address(i)
        if i < 0:
            return "unterminated address", reads
        if i > start:
            i = skip_blank(i)
            if i < n and script[i] == ",":
                i = skip_blank(i + 1)
                if i < n and script[i] in "+~":
                    i += 1
                    while i < n and script[i].isdigit():
                        i += 1
                else:
                    i = address(i)
                    if i < 0:
                        return "unterminated address", reads
        i = skip_blank(i)
        while i < n and script[i] == "!":
            i = skip_blank(i + 1)
        if i >= n:
            return "address without a command", reads
        cmd = script[i]
        i += 1
        if cmd in "{}=dDgGhHlnNpPxzF":
            if cmd == "l":
                while i < n and script[i].isdigit():
                    i += 1
            continue
        if cmd in "qQ":
            i = skip_blank(i)
            while i < n and script[i].isdigit():
                i += 1
            continue
        if cmd in ":btTv":
            # Labels run to the end of the line (or ';' for b/t/T in GNU sed).
            while i < n and script[i] not in "\n" and not (cmd != ":" and script[i] in ";}"):
                i += 1
            continue
        if cmd in "aic":
            while i < n and script[i] != "\n":
                if script[i] == "\\":
                    i += 1
                i += 1
            continue
        if cmd in "rR":
            end = script.find("\n", i)
            end = n if end < 0 else end
            name = script[i:end].strip()
            if not name:
                return "r without a file name", reads
            reads.append(name)
            i = end
            continue
        if cmd in "wWe":
            return f"the {cmd} command writes files or runs programs", reads
        if cmd in "sy":
            if i >= n or script[i] in "\n\\":
                return f"bad {cmd} command", reads
            delim = script[i]
            i = delimited(i + 1, delim)
            if i < 0:
                return f"unterminated {cmd} command", reads
            i = delimited(i, delim)
            if i < 0:
                return f"unterminated {cmd} command", reads
            if cmd == "s":
                while i < n and script[i] not in ";\n}":
                    flag = script[i]
                    if flag in "we":
                        return f"the s///{flag} flag writes files or runs programs", reads
                    if flag not in "gpiImM0123456789 \t":
                        return f"unknown s flag {flag!r}", reads
                    i += 1
            continue
        return f"unknown sed command {cmd!r}", reads
    return None, reads


def _awk(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts("-F -v --field-separator --assign", only="")
    parsed = parse_options(args, table)
    if not parsed.positionals:
        return no("awk without a program")
    program, files = parsed.positionals[0], parsed.positionals[1:]
    if re.search(r"\bsystem\b|\bgetline\b|@load|@include|\benviron\b", program, re.IGNORECASE):
        return no("the awk program runs commands or reads other input")
    if re.search(r"(?<!\|)\|(?!\|)", program):
        return no("the awk program pipes to a command")
    if re.search(r"\bprintf?\b[^;{}]*>", program):
        return no("the awk program may redirect output to a file")
    return yes(reads=[f for f in files if "=" not in f and f != "-"])


def _uniq(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts("-f --skip-fields -s --skip-chars -w --check-chars --group --all-repeated")
    parsed = parse_options(args, table)
    if len(parsed.positionals) > 1:
        return no("uniq's second argument is an output file")
    return yes(reads=[p for p in parsed.positionals if p != "-"])


def _sort(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        "-k --key -t --field-separator -S --buffer-size -T --temporary-directory --parallel "
        "--batch-size --files0-from --random-source",
        "-o --output --compress-program",
    )
    parsed = parse_options(args, table)
    reads = [*parsed.positionals, *parsed.values("--files0-from", "--random-source")]
    return yes(reads=[p for p in reads if p != "-"])


def _xxd(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts("-c -cols -g -groupsize -l -len -o -offset -s -seek -n -name")
    parsed = parse_options(args, table)
    if len(parsed.positionals) > 1:
        return no("xxd's second argument is an output file")
    return yes(reads=[p for p in parsed.positionals if p != "-"])


def _tree(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        "-L -P -I --charset --filelimit --timefmt --sort -H -T --hintro --houtro",
        "-o -R --fromfile -l",
    )
    parsed = parse_options(args, table)
    return yes(reads=parsed.positionals, reads_cwd=not parsed.positionals)


def _file(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(
        args, opts("-m --magic-file -f --files-from -F --separator -P -e --exclude", "-C --compile")
    )
    return yes(reads=[*parsed.positionals, *parsed.values("-f", "--files-from")])


def _jq(args: Sequence[str], ctx: Context) -> Verdict:
    out: list[str] = []
    reads: list[str] = []
    i = 0
    filter_seen = False
    while i < len(args):
        arg = args[i]
        if arg in ("--arg", "--argjson"):
            i += 3
            continue
        if arg in ("--slurpfile", "--rawfile"):
            if i + 2 < len(args):
                reads.append(args[i + 2])
            i += 3
            continue
        if arg in ("-f", "--from-file"):
            if i + 1 < len(args):
                reads.append(args[i + 1])
            filter_seen = True
            i += 2
            continue
        if arg in ("-L", "--indent", "--tab"):
            i += 2 if arg != "--tab" else 1
            continue
        if arg in ("--args", "--jsonargs"):
            break
        if arg.startswith("-") and arg != "-":
            i += 1
            continue
        if not filter_seen:
            filter_seen = True
        else:
            out.append(arg)
        i += 1
    return yes(reads=[*reads, *(a for a in out if a != "-")])


def _head_tail(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts("-n --lines -c --bytes -s --sleep-interval --pid --max-unchanged-stats")
    # ``head -20`` is ``head -n 20``: drop such counts unless they are an option's value.
    kept: list[str] = []
    for index, arg in enumerate(args):
        previous = args[index - 1] if index else ""
        if re.fullmatch(r"-\d+[a-zA-Z]*", arg) and previous not in table.with_arg:
            continue
        kept.append(arg)
    parsed = parse_options(kept, table)
    return yes(reads=[p for p in parsed.positionals if p != "-"])


def _ls(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        "-I --ignore -w --width -T --tabsize --block-size --format --hide --indicator-style "
        "--quoting-style --sort --time --time-style"
    )
    parsed = parse_options(args, table)
    return yes(reads=parsed.positionals, reads_cwd=not parsed.positionals)


def _du(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        "-d --max-depth -B --block-size -t --threshold --exclude -X --exclude-from --time-style "
        "--files0-from",
        "-L --dereference",
    )
    parsed = parse_options(args, table)
    return yes(reads=parsed.positionals, reads_cwd=not parsed.positionals)


def _diff(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        "-C -U -W --width -x --exclude -X --exclude-from -S --starting-file "
        "-I --ignore-matching-lines --from-file --to-file --label -L --tabsize "
        "--palette --line-format --old-line-format --new-line-format --unchanged-line-format "
        "-F --show-function-line --horizon-lines -D --ifdef",
        "--diff-program",
    )
    parsed = parse_options(args, table)
    return yes(reads=[*parsed.positionals, *parsed.values("--from-file", "--to-file")])


def _wrapper(table: Options, *, skip: int = 0, name: str) -> Checker:
    """``timeout 5 CMD``, ``nice CMD``...: read-only when CMD is."""

    def check(args: Sequence[str], ctx: Context) -> Verdict:
        parsed = parse_options(
            args, Options(with_arg=table.with_arg, unsafe=table.unsafe, posix=True)
        )
        rest = parsed.positionals[skip:]
        if not rest:
            return yes() if name in ("nice", "env", "time") else no(f"{name} without a command")
        return Verdict(ok=True, inner=tuple(rest))

    return check


def _env(args: Sequence[str], ctx: Context) -> Verdict:
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
        return yes()
    return Verdict(ok=True, inner=tuple(args[i:]))


def _command(args: Sequence[str], ctx: Context) -> Verdict:
    rest = list(args)
    while rest and rest[0] == "-p":
        rest.pop(0)
    if rest and rest[0] in ("-v", "-V"):
        return yes()
    if not rest:
        return yes()
    return Verdict(ok=True, inner=tuple(rest))


def _xargs(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        "-I -i -n --max-args -P --max-procs -L --max-lines -s --max-chars -d --delimiter -E -e "
        "--eof --replace",
        "-a --arg-file -o --open-tty",
    )
    parsed = parse_options(args, Options(with_arg=table.with_arg, unsafe=table.unsafe, posix=True))
    inner = parsed.positionals or ["echo"]
    if inner[0] not in XARGS_SAFE_TARGETS:
        return no(
            f"xargs {inner[0]} gets its arguments (possibly paths outside the workspace) from input"
        )
    return Verdict(ok=True, inner=tuple(inner))


XARGS_SAFE_TARGETS = frozenset({"echo", "printf", "basename", "dirname", "true"})
"""Commands xargs may run with arguments from its input (they read no files)."""


# -- git -----------------------------------------------------------------------------------------

GIT_GLOBAL = opts(
    "-C --namespace --super-prefix",
    "-c --config-env --exec-path --git-dir --work-tree --list-cmds",
    only="-P --no-pager -p --paginate --bare --no-replace-objects --literal-pathspecs "
    "--glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --version -v "
    "--no-lazy-fetch --no-advice",
)

GIT_DIFF_UNSAFE = "--output --ext-diff -o --open-files-in-pager -O"

GIT_READ_SUBCOMMANDS: Mapping[str, str] = MappingProxyType(
    {
        "status": "",
        "log": GIT_DIFF_UNSAFE,
        "show": GIT_DIFF_UNSAFE,
        "diff": "--output --ext-diff",
        "shortlog": "--output",
        "whatchanged": GIT_DIFF_UNSAFE,
        "blame": "",
        "annotate": "",
        "rev-parse": "",
        "describe": "",
        "ls-files": "",
        "ls-tree": "",
        "rev-list": "--output",
        "merge-base": "",
        "show-ref": "",
        "for-each-ref": "",
        "name-rev": "",
        "count-objects": "",
        "check-ignore": "",
        "check-attr": "",
        "diff-tree": "--output --ext-diff",
        "diff-files": "--output --ext-diff",
        "diff-index": "--output --ext-diff",
        "var": "",
        "show-branch": "",
        "cherry": "",
        "version": "",
        "grep": "-O --open-files-in-pager --ext-grep",
        "cat-file": "--textconv --filters",
    }
)


def _git(args: Sequence[str], ctx: Context) -> Verdict:
    if not ctx.trusted:
        return no(
            "git can run programs named in the repository's config; the workspace is not trusted"
        )
    try:
        parsed = parse_options(
            args,
            Options(
                with_arg=GIT_GLOBAL.with_arg,
                unsafe=GIT_GLOBAL.unsafe,
                only=GIT_GLOBAL.only,
                posix=True,
            ),
        )
    except UnsafeError as exc:
        return no(f"git {exc}")
    chdir = parsed.values("-C")
    chdir_value = chdir[-1] if chdir else None
    if len(chdir) > 1:
        return no("git with several -C options")
    if not parsed.positionals:
        return yes() if parsed.has("--version", "-v") else no("git without a sub-command")
    sub, rest = parsed.positionals[0], parsed.positionals[1:]
    if sub in GIT_READ_SUBCOMMANDS:
        unsafe = GIT_READ_SUBCOMMANDS[sub]
        counted = sub in ("log", "show", "whatchanged", "rev-list", "diff-tree", "reflog")
        table = opts("--contents -S -G --format" + (" -n --max-count" if counted else ""), unsafe)
        try:
            sub_parsed = parse_options(rest, table)
        except UnsafeError as exc:
            return no(f"git {sub}: {exc}")
        reads: list[str] = sub_parsed.values("--contents")
        if sub in ("diff",) and sub_parsed.has("--no-index"):
            reads.extend(sub_parsed.positionals)
        return yes(reads=reads, reads_cwd=True, chdir=chdir_value)
    special = GIT_LISTING.get(sub)
    if special is None:
        return no(f"git {sub} is not a read-only git command")
    verdict = special(rest)
    if not verdict.ok:
        return Verdict(ok=False, reason=f"git {sub}: {verdict.reason}")
    return yes(reads_cwd=True, chdir=chdir_value)


def _git_branch(args: Sequence[str]) -> Verdict:
    table = opts(
        "--sort --format --contains --no-contains --merged --no-merged --points-at --color "
        "--column",
        "-d -D --delete -m -M --move -c -C --copy -u --set-upstream-to --unset-upstream "
        "--edit-description -f --force -t --track --no-track --create-reflog",
    )
    parsed = parse_options(args, table)
    if parsed.positionals and not parsed.has("-l", "--list"):
        return no("naming a branch creates it")
    return yes()


def _git_tag(args: Sequence[str]) -> Verdict:
    table = opts(
        "--sort --format --contains --no-contains --merged --no-merged --points-at --color "
        "--column -n",
        "-d --delete -a --annotate -s --sign -u --local-user -f --force -m --message -F --file "
        "-e --edit --create-reflog -v --verify",
    )
    parsed = parse_options(args, table)
    if parsed.positionals and not parsed.has("-l", "--list"):
        return no("naming a tag creates it")
    return yes()


def _git_remote(args: Sequence[str]) -> Verdict:
    if list(args) in ([], ["-v"], ["--verbose"]) or (len(args) >= 1 and args[0] == "get-url"):
        return yes()
    return no("only listing remotes is read-only")


def _git_config(args: Sequence[str]) -> Verdict:
    if args and args[0] in ("get", "list"):
        return yes()
    table = opts(
        "-f --file --blob --type --default",
        "--add --unset --unset-all --replace-all --rename-section --remove-section -e --edit",
    )
    parsed = parse_options(args, table)
    if parsed.has(
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "-l",
        "--list",
        "--get-color",
        "--get-colorbool",
    ):
        return yes()
    if len(parsed.positionals) == 1:
        return yes()
    return no("git config with a value writes the configuration")


def _git_stash(args: Sequence[str]) -> Verdict:
    if args and args[0] in ("list", "show"):
        return yes()
    return no("only git stash list/show are read-only")


def _git_worktree(args: Sequence[str]) -> Verdict:
    return yes() if args and args[0] == "list" else no("only git worktree list is read-only")


def _git_reflog(args: Sequence[str]) -> Verdict:
    if not args or args[0] == "show" or args[0].startswith("-") or args[0] == "HEAD":
        return yes()
    return no("git reflog expire/delete change the repository")


def _git_submodule(args: Sequence[str]) -> Verdict:
    return yes() if args and args[0] == "status" else no("only git submodule status is read-only")


GIT_LISTING: Mapping[str, Callable[[Sequence[str]], Verdict]] = MappingProxyType(
    {
        "branch": _git_branch,
        "tag": _git_tag,
        "remote": _git_remote,
        "config": _git_config,
        "stash": _git_stash,
        "worktree": _git_worktree,
        "reflog": _git_reflog,
        "submodule": _git_submodule,
    }
)


def _git_checker(args: Sequence[str], ctx: Context) -> Verdict:
    try:
        return _git(args, ctx)
    except UnsafeError as exc:
        return no(f"git: {exc}")


PLAIN_READERS = tuple(
    [
        "cat",
        "tac",
        "nl",
        "od",
        "hexdump",
        "strings",
        "cksum",
        "sum",
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "stat",
        "rev",
        "fold",
        "expand",
        "unexpand",
        "fmt",
        "column",
        "cut",
        "paste",
        "comm",
        "join",
        "cmp",
        "wc",
        "look",
    ]
)

NO_PATH_COMMANDS = tuple(
    [
        "whoami",
        "id",
        "uname",
        "nproc",
        "arch",
        "tty",
        "locale",
        "groups",
        "uptime",
        "free",
        "printenv",
        "seq",
        "sleep",
        "basename",
        "dirname",
        "expr",
        "which",
        "type",
        "pwd",
        "realpath",
        "readlink",
        "logname",
        "users",
        "who",
        "getconf",
        "ps",
        "cal",
        "lsb_release",
        "df",
        "tr",
        "true",
        "false",
        ":",
        "dirs",
        "jobs",
        "wait",
    ]
)

CHECKERS: Mapping[str, Checker] = MappingProxyType(
    {
        **{name: _reader() for name in PLAIN_READERS},
        **{name: _any_args for name in NO_PATH_COMMANDS},
        "echo": _any_args,
        "printf": _printf,
        "test": _test,
        "[": _test,
        "exit": _any_args,
        "date": _date,
        "hostname": _hostname,
        "set": _set,
        "cd": _cd,
        "pushd": _cd,
        "popd": _cd,
        "head": _head_tail,
        "tail": _head_tail,
        "ls": _ls,
        "dir": _ls,
        "vdir": _ls,
        "du": _du,
        "diff": _diff,
        "grep": _grep,
        "egrep": _grep,
        "fgrep": _grep,
        "rg": _rg,
        "find": _find,
        "fd": _fd,
        "fdfind": _fd,
        "sed": _sed,
        "awk": _awk,
        "gawk": _awk,
        "mawk": _awk,
        "nawk": _awk,
        "uniq": _uniq,
        "sort": _sort,
        "xxd": _xxd,
        "tree": _tree,
        "file": _file,
        "jq": _jq,
        "git": _git_checker,
        "timeout": _wrapper(opts("-s --signal -k --kill-after"), skip=1, name="timeout"),
        "nice": _wrapper(opts("-n --adjustment"), name="nice"),
        "time": _wrapper(opts("-f --format -o --output"), name="time"),
        "stdbuf": _wrapper(opts("-i -o -e --input --output --error"), name="stdbuf"),
        "env": _env,
        "command": _command,
        "xargs": _xargs,
        "python": _version_only("--version", "-V"),
        "python3": _version_only("--version", "-V"),
        "node": _version_only("--version", "-v"),
        "npm": _version_only("--version", "-v", "ls", "list"),
        "pnpm": _version_only("--version", "-v"),
        "yarn": _version_only("--version", "-v"),
        "pip": _version_only("--version", "-V", "list", "freeze"),
        "pip3": _version_only("--version", "-V", "list", "freeze"),
        "cargo": _version_only("--version", "-V"),
        "rustc": _version_only("--version", "-V"),
        "go": _version_only("version", "env"),
        "java": _version_only("-version", "--version"),
        "gcc": _version_only("--version"),
        "clang": _version_only("--version"),
        "make": _version_only("--version", "-v"),
        "cmake": _version_only("--version"),
        "ruby": _version_only("--version", "-v"),
        "deno": _version_only("--version"),
        "tsc": _version_only("--version", "-v"),
        "uv": _version_only("--version"),
    }
)
"""Command name → checker. A name that is not here is not read-only."""
