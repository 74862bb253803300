"""Command-line option parsing the way GNU ``getopt_long`` does it, for read-only proofs.

A read-only proof must see a command's arguments exactly as the program will: which words are
options, which are option *values* (and whether a value names a file the program reads), and
which are operands. :func:`parse_options` splits an argv with an :class:`Options` table:

- short options cluster (``-la``); a short option that takes a value takes the rest of its
  word or the next word (``-X FILE``, ``-XFILE``); an *optional* value is only ever attached
  (``-w16``), as in getopt's ``w::``;
- long options take their value after ``=`` or in the next word; optional values only after
  ``=`` (``--color=auto``);
- a long option may be abbreviated to any unambiguous prefix (``--files0-f=F`` is
  ``--files0-from``, source: glibc ``getopt_long``). A prefix of a dangerous option counts as
  dangerous; a prefix of several options that the tables treat differently is ambiguous; both
  raise :class:`UnsafeError`, and so does an unknown option unless the table is
  ``permissive``;
- options are accepted after operands (GNU argument permutation) unless ``posix`` is set
  (wrappers such as ``timeout`` stop at their command); ``--`` ends the options.

When GNU and BSD disagree about whether a short option takes a value, tables treat it as a
flag: a value then counts as an operand (usually a file the command reads, which is checked),
whereas a flag misread as taking a value would hide the operand after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

OptionKind = Literal["flag", "value", "read", "optional", "list", "unsafe"]
"""How an option is treated: ``flag`` takes no value; ``value`` takes a value that names no
file; ``read`` takes the name of a file the program reads; ``optional`` takes an attached value
or none; ``list`` makes the program read files named *inside* some input (``--files0-from``,
``sha256sum -c``), which cannot be checked before it runs; ``unsafe`` writes files or runs
programs."""

_PRIORITY: tuple[OptionKind, ...] = ("unsafe", "list", "read", "value", "optional", "flag")

ALWAYS_FLAGS = frozenset({"--help", "--version"})
"""Long options every table accepts (they print and exit)."""


class UnsafeError(Exception):
    """Raised by :func:`parse_options` for an option that is unsafe, unknown or ambiguous; the
    message names the option and the reason."""


@dataclass(frozen=True, kw_only=True)
class Options:
    """An option table for :func:`parse_options` (option names with their dashes, e.g.
    ``-X`` and ``--exclude-from``); see :data:`OptionKind` for the sets. ``permissive`` accepts
    unknown options as flags (only for programs that do not abbreviate long options and whose
    file-valued options are all listed); ``posix`` stops at the first operand; ``numeric``
    accepts ``-NUM`` (``grep -3``, ``fold -80``)."""

    flags: frozenset[str] = frozenset()
    with_arg: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    lists: frozenset[str] = frozenset()
    unsafe: frozenset[str] = frozenset()
    permissive: bool = False
    posix: bool = False
    numeric: bool = False
    kinds: Mapping[str, OptionKind] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        table: dict[str, OptionKind] = dict.fromkeys(ALWAYS_FLAGS, "flag")
        groups: tuple[tuple[OptionKind, frozenset[str]], ...] = (
            ("flag", self.flags),
            ("optional", self.optional),
            ("value", self.with_arg),
            ("read", self.reads),
            ("list", self.lists),
            ("unsafe", self.unsafe),
        )
        for kind, names in groups:
            for name in names:
                # The most dangerous reading of a name listed twice wins.
                old = table.get(name)
                if old is None or _PRIORITY.index(kind) < _PRIORITY.index(old):
                    table[name] = kind
        object.__setattr__(self, "kinds", MappingProxyType(table))

    def kind(self, name: str) -> OptionKind | None:
        """The kind of an option spelled exactly ``name``, or ``None`` if unknown."""
        return self.kinds.get(name)


def opts(
    *,
    flags: str = "",
    with_arg: str = "",
    reads: str = "",
    optional: str = "",
    lists: str = "",
    unsafe: str = "",
    permissive: bool = False,
    posix: bool = False,
    numeric: bool = False,
) -> Options:
    """Build :class:`Options` from space-separated option names."""
    return Options(
        flags=frozenset(flags.split()),
        with_arg=frozenset(with_arg.split()),
        reads=frozenset(reads.split()),
        optional=frozenset(optional.split()),
        lists=frozenset(lists.split()),
        unsafe=frozenset(unsafe.split()),
        permissive=permissive,
        posix=posix,
        numeric=numeric,
    )


@dataclass(frozen=True, kw_only=True)
class Parsed:
    """Options found ``(name, value)`` in order (long names resolved from abbreviations),
    the operands, and the values of ``read`` options (files the program reads)."""

    options: list[tuple[str, str | None]]
    positionals: list[str]
    reads: list[str]

    def has(self, *names: str) -> bool:
        """Whether any of ``names`` was given."""
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[str]:
        """The values of the given options, in order."""
        return [v for n, v in self.options if n in names and v is not None]


def parse_options(args: Sequence[str], table: Options) -> Parsed:
    """Split ``args`` into options and operands with ``table`` (see the module docstring).

    Raises :class:`UnsafeError` for an unsafe, ``list``, unknown (unless ``permissive``) or
    ambiguous option, and for a value option missing its value.
    """
    parsed = Parsed(options=[], positionals=[], reads=[])
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            parsed.positionals.extend(args[i + 1 :])
            break
        if arg.startswith("--"):
            i = _long_option(args, i, table, parsed)
        elif arg.startswith("-") and arg != "-":
            i = _short_options(args, i, table, parsed)
        else:
            parsed.positionals.append(arg)
            if table.posix:
                parsed.positionals.extend(args[i + 1 :])
                break
        i += 1
    return parsed


def _long_option(args: Sequence[str], i: int, table: Options, parsed: Parsed) -> int:
    """Record the long option ``args[i]`` (``--name``, ``--name=value`` or ``--name value``);
    returns the index of the last argument it used."""
    raw, eq, value = args[i].partition("=")
    name, kind = _long(raw, table)
    if kind not in ("value", "read"):
        parsed.options.append((name, value if eq else None))
        return i
    if not eq:
        if i + 1 >= len(args):
            raise UnsafeError(f"{name} needs a value")
        value, i = args[i + 1], i + 1
    parsed.options.append((name, value))
    if kind == "read":
        parsed.reads.append(value)
    return i


def _short_options(args: Sequence[str], i: int, table: Options, parsed: Parsed) -> int:
    """Record the cluster of short options ``args[i]`` (``-abc``, ``-n5``, ``-o FILE``, and
    ``-5`` for numeric tables); returns the index of the last argument it used."""
    arg = args[i]
    j = 1
    while j < len(arg):
        if table.numeric and arg[j].isdigit():
            k = j
            while k < len(arg) and arg[k].isdigit():
                k += 1
            parsed.options.append(("-" + arg[j:k], None))
            j = k
            continue
        flag = "-" + arg[j]
        kind = _short(flag, table)
        if kind in ("value", "read"):
            rest = arg[j + 1 :]
            if not rest:
                if i + 1 >= len(args):
                    raise UnsafeError(f"{flag} needs a value")
                rest, i = args[i + 1], i + 1
            parsed.options.append((flag, rest))
            if kind == "read":
                parsed.reads.append(rest)
            return i
        if kind == "optional":
            parsed.options.append((flag, arg[j + 1 :] or None))
            return i
        parsed.options.append((flag, None))
        j += 1
    return i


def _refuse(name: str, kind: OptionKind) -> None:
    if kind == "unsafe":
        raise UnsafeError(f"{name} writes files or runs programs")
    if kind == "list":
        raise UnsafeError(
            f"{name} makes it read files named inside its input, which cannot be checked "
            "before it runs"
        )


def _short(flag: str, table: Options) -> OptionKind:
    kind = table.kind(flag)
    if kind is None:
        if table.permissive:
            return "flag"
        raise UnsafeError(f"unknown option {flag}")
    _refuse(flag, kind)
    return kind


def _long(name: str, table: Options) -> tuple[str, OptionKind]:
    """Resolve a long option name (possibly abbreviated) to ``(name, kind)``."""
    kind = table.kind(name)
    if kind is not None:
        _refuse(name, kind)
        return name, kind
    matches = sorted(k for k in table.kinds if k.startswith("--") and k.startswith(name))
    for match in matches:
        if table.kinds[match] in ("unsafe", "list"):
            raise UnsafeError(f"{name} may abbreviate {match}, which is not read-only")
    if not matches:
        if table.permissive:
            return name, "flag"
        raise UnsafeError(f"unknown option {name}")
    kinds = {table.kinds[m] for m in matches}
    if len(kinds) > 1:
        # getopt_long refuses ambiguous prefixes; the program would not run as read here.
        raise UnsafeError(f"{name} is an ambiguous abbreviation of {', '.join(matches)}")
    return matches[0], table.kinds[matches[0]]
