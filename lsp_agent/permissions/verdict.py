"""What a read-only checker says about one command (see :mod:`.readonly`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """Whether a command is read-only. ``reason`` says why not; ``reads`` are the path
    arguments it reads (as written, relative to its directory); ``reads_cwd`` says it reads its
    working directory implicitly; ``chdir`` is a directory it works in instead (``git -C``);
    ``inner`` is the command a wrapper runs (checked too)."""

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
    """A read-only verdict; ``-`` (standard input) is dropped from ``reads``."""
    return Verdict(
        ok=True, reads=tuple(r for r in reads if r != "-"), reads_cwd=reads_cwd, chdir=chdir
    )


@dataclass(frozen=True, kw_only=True)
class Context:
    """What a checker may need: ``trusted`` workspace (git is only read-only there) and the
    ``platform`` (``sys.platform``: some options mean different things on BSD systems)."""

    trusted: bool
    platform: str = "linux"


Checker = Callable[[Sequence[str], Context], Verdict]
"""A checker gets the arguments after the command name."""
