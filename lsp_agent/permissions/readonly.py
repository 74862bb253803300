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

import sys
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from lsp_agent.permissions.getopt import UnsafeError
from lsp_agent.permissions.readonly_checkers import (
    ENV_DUMP,
    any_args,
    check_awk,
    check_cd,
    check_command,
    check_date,
    check_diff,
    check_du,
    check_env,
    check_fd,
    check_file,
    check_find,
    check_grep,
    check_hostname,
    check_jq,
    check_ls,
    check_printf,
    check_ps,
    check_rg,
    check_sed,
    check_set,
    check_sort,
    check_strings,
    check_test,
    check_tree,
    check_uniq,
    check_users,
    check_who,
    check_xargs,
    check_xxd,
    head_tail,
    reader,
    refuse,
    version_only,
    wrapper,
)
from lsp_agent.permissions.readonly_git import check_git
from lsp_agent.permissions.readonly_tables import (
    HEAD_TABLE,
    NICE_TABLE,
    NO_PATH_COMMANDS,
    READER_TABLES,
    SAFE_ENV_ASSIGNMENTS,
    STDBUF_TABLE,
    TAIL_TABLE,
    TIME_TABLE,
    TIMEOUT_TABLE,
    VERSION_QUERIES,
)
from lsp_agent.permissions.verdict import Checker, Context, Verdict, no, yes

__all__ = [
    "DYNAMIC_ARGS_OK",
    "SAFE_ENV_ASSIGNMENTS",
    "Verdict",
    "check_read_only",
    "secret_variable",
]

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


CHECKERS: Mapping[str, Checker] = MappingProxyType(
    {
        **{name: reader(table) for name, table in READER_TABLES.items()},
        **{name: any_args for name in NO_PATH_COMMANDS},
        "strings": check_strings,
        "echo": any_args,
        "printf": check_printf,
        "test": check_test,
        "[": check_test,
        "exit": any_args,
        "date": check_date,
        "hostname": check_hostname,
        "set": check_set,
        "printenv": refuse(f"printenv {ENV_DUMP}"),
        "cd": check_cd,
        "pushd": check_cd,
        "popd": check_cd,
        "who": check_who,
        "users": check_users,
        "ps": check_ps,
        "head": head_tail(HEAD_TABLE),
        "tail": head_tail(TAIL_TABLE),
        "ls": check_ls,
        "dir": check_ls,
        "vdir": check_ls,
        "du": check_du,
        "diff": check_diff,
        "grep": check_grep,
        "egrep": check_grep,
        "fgrep": check_grep,
        "rg": check_rg,
        "find": check_find,
        "fd": check_fd,
        "fdfind": check_fd,
        "sed": check_sed,
        "awk": check_awk,
        "gawk": check_awk,
        "mawk": check_awk,
        "nawk": check_awk,
        "uniq": check_uniq,
        "sort": check_sort,
        "xxd": check_xxd,
        "tree": check_tree,
        "file": check_file,
        "jq": check_jq,
        "git": check_git,
        "timeout": wrapper(TIMEOUT_TABLE, skip=1, name="timeout"),
        "nice": wrapper(NICE_TABLE, name="nice"),
        "time": wrapper(TIME_TABLE, name="time"),
        "stdbuf": wrapper(STDBUF_TABLE, name="stdbuf"),
        "env": check_env,
        "command": check_command,
        "xargs": check_xargs,
        **{name: version_only(*queries) for name, queries in VERSION_QUERIES.items()},
    }
)
"""Command name → checker. A name that is not here is not read-only."""
