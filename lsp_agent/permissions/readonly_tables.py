"""The data of the read-only proof: option tables per command and the word lists the checkers
consult (:mod:`lsp_agent.permissions.readonly_checkers` reads them).

Each :func:`~lsp_agent.permissions.getopt.opts` table lists every option of one program, by
kind: ``flags``, ``with_arg`` (takes a value), ``reads`` (its value is a file the program
reads), ``optional`` (an attached optional value), ``lists`` (a file naming other files: not
provably read-only) and ``unsafe`` (writes files or runs programs). Sources: the GNU coreutils,
util-linux, binutils, grep, sed, findutils, diffutils manuals and the BSD manual pages; ripgrep,
fd, tree, jq and xxd from their own ``--help``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from lsp_agent.permissions.getopt import Options, opts

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

DATE_TABLE = opts(
    flags="-u --utc --universal -R --rfc-email --debug --resolution -j -n",
    with_arg="-d --date --rfc-3339 -v",
    reads="-f --file -r --reference",
    optional="-I --iso-8601",
    unsafe="-s --set",
)

HOSTNAME_TABLE = opts(
    flags="-a --alias -A --all-fqdns -d --domain -f --fqdn --long -i --ip-address -I "
    "--all-ip-addresses -s --short -y --yp --nis -v --verbose -V",
    unsafe="-F --file -b --boot",
)

USERS_TABLE = opts()
WHO_TABLE = opts(
    flags="-a --all -b --boot -d --dead -H --heading -l --login --lookup -m -p --process "
    "-q --count -r --runlevel -s --short -t --time -T -w --mesg --message --writable -u "
    "--users --ips",
)

UNIQ_TABLE = opts(
    flags="-c --count -d --repeated -D -i --ignore-case -u --unique -z --zero-terminated",
    with_arg="-f --skip-fields -s --skip-chars -w --check-chars",
    optional="--all-repeated --group",
    numeric=True,
)

SORT_TABLE = opts(
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

XXD_TABLE = opts(
    flags="-a -b -C -E -e -h -i -p -r -d -u -v",
    with_arg="-c -g -l -n -o -s -R",
)

DU_TABLE = opts(
    flags="-0 --null -a --all --apparent-size -b --bytes -c --total -D --dereference-args "
    "-H -h --human-readable --inodes -k -l --count-links -m -P --no-dereference -S "
    "--separate-dirs --si -s --summarize -x --one-file-system -A -g -n -r",
    with_arg="-B --block-size -d --max-depth -t --threshold --time-style --exclude -I",
    reads="-X --exclude-from",
    optional="--time",
    lists="--files0-from",
    unsafe="-L --dereference",
)

DIFF_TABLE = opts(
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

PS_VALUE_OPTIONS = opts(
    flags="-A -a -d -e -f -F -H -j -l -L -M -m -N -r -T -v -w -x -y -c -h",
    with_arg="-C -G -g -O -o -p -q -s -t -U -u --cols --columns --format --group --Group "
    "--lines --pid --ppid --quick-pid --rows --sid --sort --tty --user --User --width",
    permissive=True,
)

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

FD_TABLE = opts(
    with_arg="-e --extension -t --type -E --exclude -d --max-depth --min-depth --exact-depth "
    "-S --size --changed-within --changed-before -o --owner -c --color -j --threads "
    "--max-results --path-separator --search-path --base-directory --format --and",
    reads="--ignore-file",
    unsafe="-x --exec -X --exec-batch -L --follow -l --list-details",
    permissive=True,
)

SED_TABLE = opts(
    # BSD -l (line-buffered) is a flag; GNU's takes a value: read as a flag.
    flags="-n --quiet --silent -E -r --regexp-extended -s --separate -u --unbuffered -z "
    "--null-data --posix --debug --sandbox -b --binary --follow-symlinks -l -a",
    with_arg="-e --expression --line-length",
    unsafe="-i --in-place -I -f --file",
)

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

TREE_TABLE = opts(
    with_arg="-L -P -I --charset --filelimit --timefmt --sort -H -T --hintro --houtro",
    reads="--gitfile --infofile",
    unsafe="-o -R --fromfile --fromtabfile -l",
    # tree matches long options exactly; its file-valued options are all listed.
    permissive=True,
)

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

XARGS_TABLE = opts(
    flags="-0 --null -p --interactive -r --no-run-if-empty --show-limits -t --verbose -x --exit",
    with_arg="-d --delimiter -E -I -L -n --max-args -P --max-procs -s --max-chars "
    "--process-slot-var",
    optional="-e --eof -i --replace -l --max-lines",
    unsafe="-a --arg-file -o --open-tty",
    posix=True,
)

XARGS_SAFE_TARGETS = frozenset({"echo", "printf", "basename", "dirname", "true"})
"""Commands xargs may run with arguments from its input (they read no files)."""

STRINGS_TABLE = opts(
    flags="-a --all -d --data -f --print-file-name -w --include-all-whitespace -o -h -v -V",
    with_arg="-n --bytes -t --radix -T --target -e --encoding -s --output-separator -U --unicode",
    numeric=True,
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


TIMEOUT_TABLE = opts(
    flags="-f --foreground -p --preserve-status -v --verbose",
    with_arg="-s --signal -k --kill-after",
    posix=True,
)
NICE_TABLE = opts(with_arg="-n --adjustment", posix=True, numeric=True)
TIME_TABLE = opts(
    flags="-p --portability -q --quiet -v --verbose -V",
    with_arg="-f --format",
    unsafe="-o --output -a --append",
    posix=True,
)
STDBUF_TABLE = opts(with_arg="-i -o -e --input --output --error", posix=True)

JQ_VALUE_OPTIONS: Mapping[str, int] = MappingProxyType(
    {
        "--arg": 2,
        "--argjson": 2,
        "--slurpfile": 2,
        "--rawfile": 2,
        "--indent": 1,
        "--library-path": 1,
    }
)
"""jq options that take values, and how many (``--arg NAME VALUE``)."""
JQ_FILE_OPTIONS = frozenset({"--slurpfile", "--rawfile"})
"""jq options whose second value is a file jq reads."""
JQ_NAMED_ARGS = frozenset({"--args", "--jsonargs"})
"""jq options after which operands are arguments of the program, not input files."""

VERSION_QUERIES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "python": ("--version", "-V"),
        "python3": ("--version", "-V"),
        "node": ("--version", "-v"),
        "npm": ("--version", "-v", "ls", "list"),
        "pnpm": ("--version", "-v"),
        "yarn": ("--version", "-v"),
        "pip": ("--version", "-V", "list", "freeze"),
        "pip3": ("--version", "-V", "list", "freeze"),
        "cargo": ("--version", "-V"),
        "rustc": ("--version", "-V"),
        "go": ("version",),
        "java": ("-version", "--version"),
        "gcc": ("--version",),
        "clang": ("--version",),
        "make": ("--version", "-v"),
        "cmake": ("--version",),
        "ruby": ("--version", "-v"),
        "deno": ("--version",),
        "tsc": ("--version", "-v"),
        "uv": ("--version",),
    }
)
"""Programs known read-only only for these exact argument lists (version and list queries)."""
