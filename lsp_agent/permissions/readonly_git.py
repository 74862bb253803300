"""Which ``git`` command lines are read-only (see :mod:`lsp_agent.permissions.readonly`).

Read-only sub-commands (``status``, ``log``, ``diff``, ``show``, ``blame``...) and the listing
forms of ``branch``/``tag``/``remote``/``config``/``stash``/``worktree``/``reflog``/
``submodule`` are read-only without ``-c``, ``--output``, ``--ext-diff``, ``-O`` or
``--open-files-in-pager``, and only in a trusted workspace (a repository's ``.git/config`` can
make any git command run programs, e.g. ``core.fsmonitor``). Options whose value is a file git
reads (``blame --contents``/``--ignore-revs-file``/``-S``, ``grep -f``, ``ls-files
--exclude-from``, ``config --file``) count as reads, so the sandbox judges them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from lsp_agent.permissions.getopt import UnsafeError, opts, parse_options
from lsp_agent.permissions.verdict import Context, Verdict, no, yes

GIT_GLOBAL = opts(
    with_arg="-C --namespace --super-prefix",
    unsafe="-c --config-env --exec-path --git-dir --work-tree --list-cmds",
    flags="-P --no-pager -p --paginate --bare --no-replace-objects --literal-pathspecs "
    "--glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks -v "
    "--no-lazy-fetch --no-advice",
    posix=True,
)

GIT_DIFF_UNSAFE = "--output --ext-diff -o --open-files-in-pager -O"

GIT_READ_SUBCOMMANDS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        # sub-command: (unsafe options, options whose value is a file git reads)
        "status": ("", ""),
        "log": (GIT_DIFF_UNSAFE, ""),
        "show": (GIT_DIFF_UNSAFE, ""),
        "diff": ("--output --ext-diff", ""),
        "shortlog": ("--output", ""),
        "whatchanged": (GIT_DIFF_UNSAFE, ""),
        "blame": ("", "--contents --ignore-revs-file -S"),
        "annotate": ("", "--contents --ignore-revs-file -S"),
        "rev-parse": ("", ""),
        "describe": ("", ""),
        "ls-files": ("", "-X --exclude-from"),
        "ls-tree": ("", ""),
        "rev-list": ("--output", ""),
        "merge-base": ("", ""),
        "show-ref": ("", ""),
        "for-each-ref": ("", ""),
        "name-rev": ("", ""),
        "count-objects": ("", ""),
        "check-ignore": ("", ""),
        "check-attr": ("", ""),
        "diff-tree": ("--output --ext-diff", ""),
        "diff-files": ("--output --ext-diff", ""),
        "diff-index": ("--output --ext-diff", ""),
        "var": ("", ""),
        "show-branch": ("", ""),
        "cherry": ("", ""),
        "version": ("", ""),
        "grep": ("-O --open-files-in-pager --ext-grep", "-f"),
        "cat-file": ("--textconv --filters", ""),
    }
)
"""Read-only sub-commands. Their option tables are permissive (git has hundreds of options);
every option that writes, runs a program or names a file to read is listed."""


def check_git(args: Sequence[str], ctx: Context) -> Verdict:
    """The checker for ``git ARGS``; see the module docstring."""
    try:
        return _git(args, ctx)
    except UnsafeError as exc:
        return no(f"git: {exc}")


def _git(args: Sequence[str], ctx: Context) -> Verdict:
    if not ctx.trusted:
        return no(
            "git can run programs named in the repository's config; the workspace is not trusted"
        )
    try:
        parsed = parse_options(args, GIT_GLOBAL)
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
        unsafe, reads = GIT_READ_SUBCOMMANDS[sub]
        counted = sub in ("log", "show", "whatchanged", "rev-list", "diff-tree", "reflog")
        with_arg = "-G --format" + (" -n --max-count" if counted else "")
        if "-S" not in reads:
            with_arg += " -S"
        table = opts(with_arg=with_arg, reads=reads, unsafe=unsafe, permissive=True)
        try:
            sub_parsed = parse_options(rest, table)
        except UnsafeError as exc:
            return no(f"git {sub}: {exc}")
        files = list(sub_parsed.reads)
        if sub == "diff" and sub_parsed.has("--no-index"):
            files.extend(sub_parsed.positionals)
        return yes(reads=files, reads_cwd=True, chdir=chdir_value)
    special = GIT_LISTING.get(sub)
    if special is None:
        return no(f"git {sub} is not a read-only git command")
    verdict = special(rest)
    if not verdict.ok:
        return Verdict(ok=False, reason=f"git {sub}: {verdict.reason}")
    return yes(reads=verdict.reads, reads_cwd=True, chdir=chdir_value)


def _git_branch(args: Sequence[str]) -> Verdict:
    table = opts(
        with_arg="--sort --format --contains --no-contains --merged --no-merged --points-at "
        "--color --column",
        unsafe="-d -D --delete -m -M --move -c -C --copy -u --set-upstream-to --unset-upstream "
        "--edit-description -f --force -t --track --no-track --create-reflog",
        permissive=True,
    )
    parsed = parse_options(args, table)
    if parsed.positionals and not parsed.has("-l", "--list"):
        return no("naming a branch creates it")
    return yes()


def _git_tag(args: Sequence[str]) -> Verdict:
    table = opts(
        with_arg="--sort --format --contains --no-contains --merged --no-merged --points-at "
        "--color --column -n",
        unsafe="-d --delete -a --annotate -s --sign -u --local-user -f --force -m --message "
        "-F --file -e --edit --create-reflog -v --verify",
        permissive=True,
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
    table = opts(
        with_arg="--blob --type --default",
        # ``git config -f FILE --list`` prints any INI-like file (credentials included).
        reads="-f --file",
        unsafe="--add --unset --unset-all --replace-all --rename-section --remove-section "
        "-e --edit",
        permissive=True,
    )
    if args and args[0] in ("get", "list"):
        parsed = parse_options(args[1:], table)
        return yes(reads=parsed.reads)
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
        return yes(reads=parsed.reads)
    if len(parsed.positionals) == 1:
        return yes(reads=parsed.reads)
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
