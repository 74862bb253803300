"""Which simple commands are provably read-only, flag by flag.

:func:`check_read_only` looks at one command's literal argv (globs already expanded) and says
whether it only reads — no file written, no program run on its behalf, nothing printed from
the environment — and which paths it reads, so the engine can keep reads inside the roots.

Every command has a complete option table (:mod:`lsp_agent.permissions.getopt`): an option the
table does not know, or an ambiguous abbreviation of one, makes the command not read-only.
Options whose value is a file the program reads count as reads (``wc``/``sort``/``du``
``--files0-from`` and ``sha256sum -c``, which read files named *inside* another file, are not
read-only at all), for example:

- ``sed`` without ``-i`` and whose script has no ``w``/``W``/``e`` commands or ``s///w``/``e``
  flags (the script is tokenised, not grepped, :mod:`lsp_agent.permissions.sed_script`);
- ``find`` without ``-exec``/``-execdir``/``-ok``/``-delete``/``-fprint*``/``-fls``/
  ``-files0-from``/``-L``;
- ``rg`` without ``--pre``/``--search-zip``/``--hostname-bin``/``-L``; ``sort`` without ``-o``
  or ``--compress-program``; ``uniq``/``xxd`` without an output file; ``tree`` without ``-o``;
  ``diff -r`` only with ``--no-dereference``; ``ls -R`` without ``-L``; ``du`` without ``-L``;
  ``file -m LIST`` and ``du -X FILE`` read those files;
- ``env``/``printenv``/``set`` without arguments, ``ps e`` and ``jq env`` print the
  environment (secrets such as API keys), like ``/proc/self/environ``: not read-only;
- ``git``: see :mod:`lsp_agent.permissions.readonly_git` (trusted workspaces only).

GNU long options may be abbreviated (``sort --out=f`` is ``--output``, ``wc --files0-f=F`` is
``--files0-from``): abbreviations are resolved as ``getopt_long`` does. Anything not in these
tables is not read-only.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from lsp_agent.permissions.getopt import Options, UnsafeError, opts, parse_options
from lsp_agent.permissions.readonly_git import check_git
from lsp_agent.permissions.sed_script import sed_script_check
from lsp_agent.permissions.verdict import Checker, Context, Verdict, no, yes

__all__ = [
    "DYNAMIC_ARGS_OK",
    "SAFE_ENV_ASSIGNMENTS",
    "Verdict",
    "check_read_only",
    "secret_variable",
]

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

SECRET_NAME_PARTS = frozenset(
    {
        "KEY",
        "KEYS",
        "APIKEY",
        "TOKEN",
        "TOKENS",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "AUTH",
        "COOKIE",
        "PRIVATE",
    }
)
"""Words (between ``_``) of environment variable names that usually hold credentials."""

ENV_DUMP = (
    "prints the environment variables, which may hold secrets such as API keys "
    "(like reading /proc/self/environ)"
)


def secret_variable(name: str) -> bool:
    """Whether a shell variable named ``name`` probably holds a credential
    (``ANTHROPIC_API_KEY``, ``GITHUB_TOKEN``, ``DB_PASSWORD``...)."""
    upper = name.upper()
    parts = [p for p in upper.split("_") if p]
    return any(p in SECRET_NAME_PARTS for p in parts) or upper.endswith(
        ("APIKEY", "TOKEN", "SECRET", "PASSWORD")
    )


def check_read_only(argv: Sequence[str], *, trusted: bool, platform: str | None = None) -> Verdict:
    """Whether ``argv`` (literal words, globs expanded) only reads; see the module docstring.
    ``platform`` is ``sys.platform`` by default (a few options differ on BSD systems)."""
    if not argv:
        return yes()
    name = argv[0]
    if "/" in name:
        return no(f"{name} is a program path, not a known read-only command")
    checker = CHECKERS.get(name)
    if checker is None:
        return no(f"{name} is not a known read-only command")
    try:
        return checker(argv[1:], Context(trusted=trusted, platform=platform or sys.platform))
    except UnsafeError as exc:
        return no(f"{name}: {exc}")


# -- generic shapes ------------------------------------------------------------------------------


def _any_args(args: Sequence[str], ctx: Context) -> Verdict:
    return yes()


def _refuse(reason: str) -> Checker:
    def check(args: Sequence[str], ctx: Context) -> Verdict:
        return no(reason)

    return check


def _reader(table: Options) -> Checker:
    """A command whose operands (and ``read`` option values) are files it reads."""

    def check(args: Sequence[str], ctx: Context) -> Verdict:
        parsed = parse_options(args, table)
        return yes(reads=[*parsed.positionals, *parsed.reads])

    return check


def _version_only(*accepted: str) -> Checker:
    allowed = {tuple(a.split()) for a in accepted}

    def check(args: Sequence[str], ctx: Context) -> Verdict:
        if tuple(args) in allowed:
            return yes()
        return no("only version queries of this program are known to be read-only")

    return check


# -- option tables of plain readers (GNU coreutils/util-linux/binutils, plus BSD spellings) ------

SUM_FLAGS = (
    "-b --binary -t --text --tag --untagged -z --zero --ignore-missing --quiet --status "
    "--strict -w --warn --debug --base64 --raw"
)
SUM_CHECK = "-c --check"
"""``sha256sum -c LIST`` reads the files named inside LIST: not provably inside the roots."""

READER_TABLES: Mapping[str, Options] = MappingProxyType(
    {
        "cat": opts(
            flags="-A --show-all -b --number-nonblank -e -E --show-ends -n --number -s "
            "--squeeze-blank -t -T --show-tabs -u -v --show-nonprinting -l"
        ),
        "tac": opts(flags="-b --before -r --regex", with_arg="-s --separator"),
        "nl": opts(
            flags="-p --no-renumber",
            with_arg="-b --body-numbering -d --section-delimiter -f --footer-numbering "
            "-h --header-numbering -i --line-increment -l --join-blank-lines -n --number-format "
            "-s --number-separator -v --starting-line-number -w --number-width",
        ),
        "od": opts(
            flags="-v --output-duplicates --traditional -a -b -c -d -f -i -l -o -s -x -B -D -e "
            "-F -H -h -I -L -O -X",
            with_arg="-A --address-radix -j --skip-bytes -N --read-bytes -t --format --endian -S",
            optional="--strings -w --width",
        ),
        "hexdump": opts(
            flags="-b --one-byte-octal -c --one-byte-char -C --canonical -d --two-bytes-decimal "
            "-o --two-bytes-octal -x --two-bytes-hex -X --one-byte-hex -v --no-squeezing -h -V",
            with_arg="-e --format -n --length -s --skip",
            reads="-f --format-file",
            optional="-L --color",
        ),
        "cksum": opts(flags=SUM_FLAGS, with_arg="-a --algorithm -l --length -o", lists=SUM_CHECK),
        "sum": opts(flags="-r -s --sysv"),
        **{
            name: opts(flags=SUM_FLAGS, lists=SUM_CHECK)
            for name in (
                "md5sum",
                "sha1sum",
                "sha224sum",
                "sha256sum",
                "sha384sum",
                "sha512sum",
            )
        },
        "b2sum": opts(flags=SUM_FLAGS, with_arg="-l --length", lists=SUM_CHECK),
        # GNU -f/-t are flags, BSD's take a value: read as flags (see getopt's docstring).
        "stat": opts(
            flags="-L --dereference -f --file-system -t --terse -F -l -n -q -r -s -x",
            with_arg="-c --format --printf --cached",
        ),
        "rev": opts(flags="-0 --zero -h -V"),
        "fold": opts(flags="-b --bytes -s --spaces", with_arg="-w --width", numeric=True),
        "expand": opts(flags="-i --initial", with_arg="-t --tabs", numeric=True),
        "unexpand": opts(flags="-a --all --first-only", with_arg="-t --tabs", numeric=True),
        "fmt": opts(
            flags="-c --crown-margin -s --split-only -t --tagged-paragraph -u "
            "--uniform-spacing -m -n -p",
            with_arg="--prefix -w --width -g --goal -d -l",
            numeric=True,
        ),
        "column": opts(
            flags="-t --table -d --table-noheadings -e --table-header-repeat -L "
            "--keep-empty-lines -J --json -x --fillrows -h -V",
            with_arg="-n --table-name -O --table-order -N --table-columns -l "
            "--table-columns-limit -E --table-noextreme -H --table-hide -R --table-right -T "
            "--table-truncate -W --table-wrap -r --tree -i --tree-id -p --tree-parent -c "
            "--output-width -o --output-separator -s --separator",
        ),
        "cut": opts(
            flags="-n --complement -s --only-delimited -z --zero-terminated -w",
            with_arg="-b --bytes -c --characters -d --delimiter -f --fields --output-delimiter",
        ),
        "paste": opts(flags="-s --serial -z --zero-terminated", with_arg="-d --delimiters"),
        "comm": opts(
            flags="-1 -2 -3 --check-order --nocheck-order --total -z --zero-terminated -i",
            with_arg="--output-delimiter",
        ),
        "join": opts(
            flags="-i --ignore-case --check-order --nocheck-order --header -z --zero-terminated",
            with_arg="-a -e -j -o -t -v -1 -2",
        ),
        "cmp": opts(
            flags="-b --print-bytes -l --verbose -s --quiet --silent -v -h -x -z",
            with_arg="-i --ignore-initial -n --bytes",
        ),
        "wc": opts(
            flags="-c --bytes -m --chars -l --lines -L --max-line-length -w --words",
            with_arg="--total",
            lists="--files0-from",
        ),
        "look": opts(
            flags="-a --alternative -b --binary -d --alphanum -f --ignore-case -h -V",
            with_arg="-t --terminate",
        ),
    }
)
"""Commands whose operands are the files they read."""


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
    table = opts(
        flags="-u --utc --universal -R --rfc-email --debug --resolution -j -n",
        with_arg="-d --date --rfc-3339 -v",
        reads="-f --file -r --reference",
        optional="-I --iso-8601",
        unsafe="-s --set",
    )
    parsed = parse_options(args, table)
    if any(not p.startswith("+") for p in parsed.positionals):
        return no("date with an argument sets the clock")
    return yes(reads=parsed.reads)


def _hostname(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        flags="-a --alias -A --all-fqdns -d --domain -f --fqdn --long -i --ip-address -I "
        "--all-ip-addresses -s --short -y --yp --nis -v --verbose -V",
        unsafe="-F --file -b --boot",
    )
    parsed = parse_options(args, table)
    return no("hostname NAME sets the host name") if parsed.positionals else yes()


def _set(args: Sequence[str], ctx: Context) -> Verdict:
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


def _cd(args: Sequence[str], ctx: Context) -> Verdict:
    # The walk already moved the working directory; cd itself reads nothing.
    return yes()


def _who(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        flags="-a --all -b --boot -d --dead -H --heading -l --login --lookup -m -p --process "
        "-q --count -r --runlevel -s --short -t --time -T -w --mesg --message --writable -u "
        "--users --ips",
    )
    parsed = parse_options(args, table)
    # ``who am i`` (two operands) is the current terminal; one operand is a utmp file to read.
    if len(parsed.positionals) == 1:
        return yes(reads=parsed.positionals)
    if len(parsed.positionals) > 2:
        return no("who takes a file or 'am i'")
    return yes()


def _users(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, opts())
    return yes(reads=parsed.positionals)


PS_VALUE_OPTIONS = opts(
    flags="-A -a -d -e -f -F -H -j -l -L -M -m -N -r -T -v -w -x -y -c -h",
    with_arg="-C -G -g -O -o -p -q -s -t -U -u --cols --columns --format --group --Group "
    "--lines --pid --ppid --quick-pid --rows --sid --sort --tty --user --User --width",
    permissive=True,
)


def _ps(args: Sequence[str], ctx: Context) -> Verdict:
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


GREP_TABLE = opts(
    flags="-E --extended-regexp -F --fixed-strings -G --basic-regexp -P --perl-regexp -i -y "
    "--ignore-case --no-ignore-case -w --word-regexp -x --line-regexp -z --null-data -s "
    "--no-messages -v --invert-match -V -b --byte-offset -n --line-number --line-buffered -H "
    "--with-filename -h --no-filename -o --only-matching -q --quiet --silent -a --text -I -r "
    "--recursive -L --files-without-match -l --files-with-matches -c --count -T --initial-tab "
    "-Z --null -U --binary -u --unix-byte-offsets --no-group-separator -O -p",
    with_arg="-e --regexp -m --max-count -A --after-context -B --before-context -C --label "
    "-d --directories -D --devices --binary-files --group-separator --include --exclude "
    "--exclude-dir",
    reads="-f --file --exclude-from",
    # GNU requires --context's value, BSD makes it optional: optional never hides an operand.
    optional="--context --color --colour",
    unsafe="-R --dereference-recursive -S",
    numeric=True,
)


def _grep(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, GREP_TABLE)
    positionals = parsed.positionals
    if not parsed.has("-e", "--regexp", "-f", "--file"):
        if not positionals:
            return no("grep without a pattern")
        positionals = positionals[1:]
    recursive = parsed.has("-r", "--recursive") or "recurse" in parsed.values("-d", "--directories")
    return yes(reads=[*positionals, *parsed.reads], reads_cwd=recursive and not positionals)


RG_TABLE = opts(
    with_arg="-e --regexp -g --glob --iglob -t --type -T --type-not --type-add --type-clear "
    "-A --after-context -B --before-context -C --context -m --max-count -d --max-depth "
    "--maxdepth -M --max-columns --max-filesize -j --threads --color --colors -E --encoding "
    "--engine --sort --sortr --field-match-separator --field-context-separator "
    "--path-separator --context-separator -r --replace --dfa-size-limit --regex-size-limit "
    "--generate",
    reads="-f --file --ignore-file",
    unsafe="--pre --pre-glob -z --search-zip --hostname-bin -L --follow",
    # ripgrep does not abbreviate long options; its file-valued options are all listed.
    permissive=True,
)


def _rg(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, RG_TABLE)
    positionals = parsed.positionals
    files_mode = parsed.has("--files", "--type-list", "--version", "-V", "--help", "-h")
    if not files_mode and not parsed.has("-e", "--regexp", "-f", "--file"):
        if not positionals:
            return no("rg without a pattern")
        positionals = positionals[1:]
    return yes(reads=[*positionals, *parsed.reads], reads_cwd=not positionals)


FIND_UNSAFE = frozenset(
    {
        "-exec",
        "-execdir",
        "-ok",
        "-okdir",
        "-delete",
        "-fprint",
        "-fprint0",
        "-fprintf",
        "-fls",
        "-files0-from",
    }
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
            return no(f"find {arg} runs programs, writes files or reads names from a file")
    return yes(reads=starts, reads_cwd=not starts)


FD_TABLE = opts(
    with_arg="-e --extension -t --type -E --exclude -d --max-depth --min-depth --exact-depth "
    "-S --size --changed-within --changed-before -o --owner -c --color -j --threads "
    "--max-results --path-separator --search-path --base-directory --format --and",
    reads="--ignore-file",
    unsafe="-x --exec -X --exec-batch -L --follow -l --list-details",
    permissive=True,
)


def _fd(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, FD_TABLE)
    paths = parsed.positionals[1:] + parsed.values("--search-path", "--base-directory")
    return yes(reads=[*paths, *parsed.reads], reads_cwd=not paths)


SED_TABLE = opts(
    # BSD -l (line-buffered) is a flag; GNU's takes a value: read as a flag.
    flags="-n --quiet --silent -E -r --regexp-extended -s --separate -u --unbuffered -z "
    "--null-data --posix --debug --sandbox -b --binary --follow-symlinks -l -a",
    with_arg="-e --expression --line-length",
    unsafe="-i --in-place -I -f --file",
)


def _sed(args: Sequence[str], ctx: Context) -> Verdict:
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


AWK_TABLE = opts(
    flags="--posix --traditional --sandbox -P -c -S",
    with_arg="-F -v --field-separator --assign",
)

AWK_UNSAFE = re.compile(
    r"\bsystem\b|\bgetline\b|@load|@include|\benviron\b|\bARGV\b|\bARGC\b|\bPROCINFO\b",
    re.IGNORECASE,
)
"""Awk words that run commands, read other input or the environment, or change which files
are read (``ARGV[1]="/etc/shadow"`` in a ``BEGIN`` block)."""


def _awk(args: Sequence[str], ctx: Context) -> Verdict:
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


def _uniq(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        flags="-c --count -d --repeated -D -i --ignore-case -u --unique -z --zero-terminated",
        with_arg="-f --skip-fields -s --skip-chars -w --check-chars",
        optional="--all-repeated --group",
        numeric=True,
    )
    parsed = parse_options(args, table)
    if len(parsed.positionals) > 1:
        return no("uniq's second argument is an output file")
    return yes(reads=parsed.positionals)


def _sort(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        flags="-b --ignore-leading-blanks -d --dictionary-order -f --ignore-case -g "
        "--general-numeric-sort -i --ignore-nonprinting -M --month-sort -h --human-numeric-sort "
        "-n --numeric-sort -R --random-sort -r --reverse -V --version-sort -c -C --debug -m "
        "--merge -s --stable -u --unique -z --zero-terminated",
        with_arg="-k --key -t --field-separator -S --buffer-size -T --temporary-directory "
        "--parallel --batch-size --sort",
        reads="--random-source",
        optional="--check",
        lists="--files0-from",
        unsafe="-o --output --compress-program",
    )
    parsed = parse_options(args, table)
    return yes(reads=[*parsed.positionals, *parsed.reads])


XXD_LONG = MappingProxyType(
    {
        "-autoskip": "-a",
        "-bits": "-b",
        "-capitalize": "-C",
        "-EBCDIC": "-E",
        "-include": "-i",
        "-ps": "-p",
        "-postscript": "-p",
        "-plain": "-p",
        "-revert": "-r",
        "-version": "-v",
        "-cols": "-c",
        "-groupsize": "-g",
        "-len": "-l",
        "-name": "-n",
        "-offset": "-o",
        "-seek": "-s",
    }
)
"""xxd's single-dash long option names and the short options they stand for."""


def _xxd(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        flags="-a -b -C -E -e -h -i -p -r -d -u -v",
        with_arg="-c -g -l -n -o -s -R",
    )
    parsed = parse_options([XXD_LONG.get(a, a) for a in args], table)
    if len(parsed.positionals) > 1:
        return no("xxd's second argument is an output file")
    return yes(reads=parsed.positionals)


TREE_TABLE = opts(
    with_arg="-L -P -I --charset --filelimit --timefmt --sort -H -T --hintro --houtro",
    reads="--gitfile --infofile",
    unsafe="-o -R --fromfile --fromtabfile -l",
    # tree matches long options exactly; its file-valued options are all listed.
    permissive=True,
)


def _tree(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, TREE_TABLE)
    return yes(reads=[*parsed.positionals, *parsed.reads], reads_cwd=not parsed.positionals)


FILE_TABLE = opts(
    flags="-b --brief -c --checking-printout -d --debug -E -h --no-dereference -i --mime "
    "--mime-type --mime-encoding -k --keep-going -l --list -L --dereference -N --no-pad -n "
    "--no-buffer -0 --print0 -r --raw -s --special-files --extension --apple -D -I -v",
    with_arg="-e --exclude --exclude-quiet -F --separator -P --parameter",
    reads="-m --magic-file -M",
    lists="-f --files-from",
    unsafe="-C --compile -p --preserve-date -z --uncompress -Z --uncompress-noreport -S "
    "--no-sandbox",
)


def _file(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, FILE_TABLE)
    # ``-m`` takes a colon-separated list of magic files.
    magic = [part for value in parsed.reads for part in value.split(":") if part]
    return yes(reads=[*parsed.positionals, *magic])


JQ_FLAGS = frozenset("nrjascCMSeRhVb0")
JQ_LONG_FLAGS = frozenset(
    {
        "--null-input",
        "--raw-output",
        "--raw-output0",
        "--join-output",
        "--ascii-output",
        "--slurp",
        "--compact-output",
        "--color-output",
        "--monochrome-output",
        "--sort-keys",
        "--exit-status",
        "--raw-input",
        "--tab",
        "--seq",
        "--stream",
        "--stream-errors",
        "--unbuffered",
        "--binary",
        "--help",
        "--version",
        "--build-configuration",
    }
)
JQ_UNSAFE = re.compile(
    r"\$ENV\b|(?<![\w.$\"])env\b|\b(?:import|include|modulemeta|get_search_list)\b"
    r"|\$__prog"
)
"""jq builtins that print the environment (``env``, ``$ENV``) or load other files."""


def _jq(args: Sequence[str], ctx: Context) -> Verdict:
    """jq matches options exactly (no abbreviations); short flags may be combined."""
    program: str | None = None
    inputs: list[str] = []
    reads: list[str] = []
    named_args = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest = list(args[i + 1 :])
            if program is None and rest:
                program, rest = rest[0], rest[1:]
            if not named_args:
                inputs.extend(rest)
            break
        if arg.startswith("--"):
            if arg in ("--arg", "--argjson", "--slurpfile", "--rawfile"):
                if i + 2 >= len(args):
                    return no(f"jq {arg} needs a name and a value")
                if arg in ("--slurpfile", "--rawfile"):
                    reads.append(args[i + 2])
                i += 3
                continue
            if arg in ("--indent", "--library-path"):
                i += 2
                continue
            if arg in ("--args", "--jsonargs"):
                named_args = True
            elif arg == "--from-file":
                return no(
                    "jq --from-file: the jq program comes from a file and may print the environment"
                )
            elif arg not in JQ_LONG_FLAGS:
                return no(f"jq: unknown option {arg}")
            i += 1
            continue
        if arg.startswith("-") and arg != "-":
            letters = arg[1:]
            if letters.startswith("L"):
                i += 1 if len(letters) > 1 else 2
                continue
            for letter in letters:
                if letter == "f":
                    return no(
                        "jq -f: the jq program comes from a file and may print the environment"
                    )
                if letter not in JQ_FLAGS:
                    return no(f"jq: unknown option -{letter}")
            i += 1
            continue
        if program is None:
            program = arg
        elif not named_args:
            inputs.append(arg)
        i += 1
    if program is not None and JQ_UNSAFE.search(program):
        return no("the jq program reads the environment (env, $ENV) or loads modules")
    return yes(reads=[*reads, *inputs])


HEAD_TABLE = opts(
    flags="-q --quiet --silent -v --verbose -z --zero-terminated",
    with_arg="-n --lines -c --bytes",
    numeric=True,
)
TAIL_TABLE = opts(
    flags="-F -q --quiet --silent --retry -v --verbose -z --zero-terminated -f -r",
    with_arg="-n --lines -c --bytes -s --sleep-interval --pid --max-unchanged-stats -b",
    optional="--follow",
    numeric=True,
)


def _head_tail(table: Options) -> Checker:
    def check(args: Sequence[str], ctx: Context) -> Verdict:
        parsed = parse_options(args, table)
        return yes(reads=parsed.positionals)

    return check


LS_TABLE = opts(
    # GNU -I/-T/-w take values, BSD's are flags: read as flags (an operand is then checked).
    flags="-a --all -A --almost-all --author -b --escape -B --ignore-backups -c -C -d "
    "--directory -D --dired -f -F --file-type --full-time -g --group-directories-first -G "
    "--no-group -h --human-readable --si -H --dereference-command-line "
    "--dereference-command-line-symlink-to-dir -i --inode -I -k --kibibytes -l -L "
    "--dereference -m -n --numeric-uid-gid -N --literal -o -p -q --hide-control-chars "
    "--show-control-chars -Q --quote-name -r --reverse -R --recursive -s --size -S -t -T -u -U "
    "-v -w -x -X -Z --context --zero -1 -@ -e -O -P -W -% -,",
    with_arg="--block-size --format --hide --ignore --indicator-style --quoting-style --sort "
    "--time --time-style --tabsize --width",
    optional="--color --classify --hyperlink",
)


def _ls(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, LS_TABLE)
    if parsed.has("-R", "--recursive") and parsed.has("-L", "--dereference"):
        return no("ls -RL follows symbolic links out of the workspace")
    return yes(reads=parsed.positionals, reads_cwd=not parsed.positionals)


def _du(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        flags="-0 --null -a --all --apparent-size -b --bytes -c --total -D --dereference-args "
        "-H -h --human-readable --inodes -k -l --count-links -m -P --no-dereference -S "
        "--separate-dirs --si -s --summarize -x --one-file-system -A -g -n -r",
        with_arg="-B --block-size -d --max-depth -t --threshold --time-style --exclude -I",
        reads="-X --exclude-from",
        optional="--time",
        lists="--files0-from",
        unsafe="-L --dereference",
    )
    parsed = parse_options(args, table)
    return yes(reads=[*parsed.positionals, *parsed.reads], reads_cwd=not parsed.positionals)


def _diff(args: Sequence[str], ctx: Context) -> Verdict:
    table = opts(
        flags="--normal -q --brief -s --report-identical-files -c -u -e --ed -n --rcs -y "
        "--side-by-side --left-column --suppress-common-lines -p --show-c-function -t "
        "--expand-tabs -T --initial-tab --suppress-blank-empty -l --paginate -r --recursive "
        "--no-dereference -N --new-file --unidirectional-new-file --ignore-file-name-case "
        "--no-ignore-file-name-case -i --ignore-case -E --ignore-tab-expansion -Z "
        "--ignore-trailing-space -b --ignore-space-change -w --ignore-all-space -B "
        "--ignore-blank-lines -a --text --strip-trailing-cr -d --minimal --speed-large-files -v "
        "-P",
        with_arg="-C -U -W --width -F --show-function-line --label -L --tabsize -x --exclude -S "
        "--starting-file -I --ignore-matching-lines -D --ifdef --line-format --old-line-format "
        "--new-line-format --unchanged-line-format --old-group-format --new-group-format "
        "--changed-group-format --unchanged-group-format --horizon-lines --palette",
        reads="-X --exclude-from --from-file --to-file",
        optional="--context --unified --color",
    )
    parsed = parse_options(args, table)
    if parsed.has("-r", "--recursive") and not parsed.has("--no-dereference"):
        return no("diff -r follows symbolic links out of the workspace (add --no-dereference)")
    return yes(reads=[*parsed.positionals, *parsed.reads])


def _wrapper(table: Options, *, skip: int = 0, name: str) -> Checker:
    """``timeout 5 CMD``, ``nice CMD``...: read-only when CMD is."""

    def check(args: Sequence[str], ctx: Context) -> Verdict:
        parsed = parse_options(args, table)
        rest = parsed.positionals[skip:]
        if not rest:
            return yes() if name in ("nice", "time") else no(f"{name} without a command")
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
        return no(f"env without a command {ENV_DUMP}")
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


XARGS_TABLE = opts(
    flags="-0 --null -p --interactive -r --no-run-if-empty --show-limits -t --verbose -x --exit",
    with_arg="-d --delimiter -E -I -L -n --max-args -P --max-procs -s --max-chars "
    "--process-slot-var",
    optional="-e --eof -i --replace -l --max-lines",
    unsafe="-a --arg-file -o --open-tty",
    posix=True,
)


def _xargs(args: Sequence[str], ctx: Context) -> Verdict:
    parsed = parse_options(args, XARGS_TABLE)
    inner = parsed.positionals or ["echo"]
    if inner[0] not in XARGS_SAFE_TARGETS:
        return no(
            f"xargs {inner[0]} gets its arguments (possibly paths outside the workspace) from input"
        )
    return Verdict(ok=True, inner=tuple(inner))


XARGS_SAFE_TARGETS = frozenset({"echo", "printf", "basename", "dirname", "true"})
"""Commands xargs may run with arguments from its input (they read no files)."""


STRINGS_TABLE = opts(
    flags="-a --all -d --data -f --print-file-name -w --include-all-whitespace -o -h -v -V",
    with_arg="-n --bytes -t --radix -T --target -e --encoding -s --output-separator -U --unicode",
    numeric=True,
)


def _strings(args: Sequence[str], ctx: Context) -> Verdict:
    """binutils reads more options from ``@FILE`` operands: those files are reads too."""
    parsed = parse_options(args, STRINGS_TABLE)
    reads = [p[1:] if p.startswith("@") and len(p) > 1 else p for p in parsed.positionals]
    return yes(reads=reads)


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
        "getconf",
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
"""Commands that read no file contents and print nothing secret whatever their arguments."""

CHECKERS: Mapping[str, Checker] = MappingProxyType(
    {
        **{name: _reader(table) for name, table in READER_TABLES.items()},
        **{name: _any_args for name in NO_PATH_COMMANDS},
        "strings": _strings,
        "echo": _any_args,
        "printf": _printf,
        "test": _test,
        "[": _test,
        "exit": _any_args,
        "date": _date,
        "hostname": _hostname,
        "set": _set,
        "printenv": _refuse(f"printenv {ENV_DUMP}"),
        "cd": _cd,
        "pushd": _cd,
        "popd": _cd,
        "who": _who,
        "users": _users,
        "ps": _ps,
        "head": _head_tail(HEAD_TABLE),
        "tail": _head_tail(TAIL_TABLE),
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
        "git": check_git,
        "timeout": _wrapper(
            opts(
                flags="-f --foreground -p --preserve-status -v --verbose",
                with_arg="-s --signal -k --kill-after",
                posix=True,
            ),
            skip=1,
            name="timeout",
        ),
        "nice": _wrapper(opts(with_arg="-n --adjustment", posix=True, numeric=True), name="nice"),
        "time": _wrapper(
            opts(
                flags="-p --portability -q --quiet -v --verbose -V",
                with_arg="-f --format",
                unsafe="-o --output -a --append",
                posix=True,
            ),
            name="time",
        ),
        "stdbuf": _wrapper(
            opts(with_arg="-i -o -e --input --output --error", posix=True), name="stdbuf"
        ),
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
        "go": _version_only("version"),
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
