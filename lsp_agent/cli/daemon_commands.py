"""``lsp-agent daemon status`` and ``lsp-agent daemon stop``: what the running daemon is doing,
and asking it to stop. A socket the client refuses to trust (a folder or socket open to other
users, one of another user) is reported as such, with what to do, rather than as no daemon:
a daemon may well be running behind it."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TextIO

from lsp_agent.daemon import client
from lsp_agent.daemon.paths import socket_fix, socket_path, socket_problem


def untrusted_socket(environ: Mapping[str, str]) -> str | None:
    """The sentence saying why the daemon's socket is not used and what to do, or ``None``
    when it is private to this user or missing."""
    path = socket_path(environ)
    problem = socket_problem(path)
    if problem is None or problem == "no daemon":
        return None
    return (
        f"cannot use the daemon socket: {problem}, so a daemon may be running without "
        f"being reachable; {socket_fix(path)}"
    )


def daemon_status(
    environ: Mapping[str, str], *, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    """Print the daemon's state; returns 0 when one answered, else 1."""
    untrusted = untrusted_socket(environ)
    if untrusted is not None:
        print(f"lsp-agent: error: {untrusted}", file=err)
        return 1
    info = client.status(environ)
    if info is None:
        print("lsp-agent daemon: not running", file=out)
        return 1
    state = "stopping once its runs end" if info.get("stopping") else "running"
    # "running" counts the background runs too: say so, rather than list them side by side.
    runs = info["running"]
    print(
        f"lsp-agent daemon: {state} (pid {info['pid']}, {runs} run{'' if runs == 1 else 's'} "
        f"in progress ({info.get('background', 0)} in the background), {info['served']} served)",
        file=out,
    )
    return 0


def daemon_stop(
    environ: Mapping[str, str], *, out: TextIO = sys.stdout, err: TextIO = sys.stderr
) -> int:
    """Ask the daemon to stop (at once, or once its background runs end); returns 0, or 1
    when its socket cannot be trusted (nothing was asked)."""
    untrusted = untrusted_socket(environ)
    if untrusted is not None:
        print(f"lsp-agent: error: {untrusted}", file=err)
        return 1
    info = client.status(environ)
    waiting = int(info.get("background", 0)) if info else 0
    if waiting:
        client.stop(environ, timeout_s=0)
        print(
            f"lsp-agent daemon: stopping once its background runs end ({waiting} running; "
            "see lsp-agent ps, end one with lsp-agent kill ID)",
            file=out,
        )
        return 0
    stopped = client.stop(environ)
    print("lsp-agent daemon: stopped" if stopped else "lsp-agent daemon: not running", file=out)
    return 0
