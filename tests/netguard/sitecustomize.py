"""Loopback guard: a connection from a test process to anything but a loopback address is
refused and recorded, so the test that caused it fails (see ``tests/conftest.py``).

It checks the socket's actual peer through the interpreter's ``socket.connect`` audit event
(PEP 578), below every client library: the Anthropic SDK's HTTP client, MCP transports, raw
sockets. A client whose URL names another host but that goes through a loopback proxy connects
to the proxy, and passes. Unix-domain sockets are local and pass.

The file is named ``sitecustomize`` so that the Python subprocesses tests start (the server,
``run -p``) install it at start-up: the test session puts this folder first on ``PYTHONPATH``
and names the log in ``LSP_AGENT_TEST_NETGUARD_LOG``; without that variable, importing it does
nothing. It must not import the project (a subprocess may not have it on its path).
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from typing import Any

LOG_VARIABLE = "LSP_AGENT_TEST_NETGUARD_LOG"
"""Environment variable naming the file that refused connections are appended to."""

_installed: list[str] = []


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an IP literal, optionally with an IPv6 zone, or ``localhost``) is a
    loopback address; an IPv4-mapped IPv6 address counts as its IPv4 address."""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "socket.connect" or not _installed:
        return
    sock, address = args
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    host = str(address[0])
    if is_loopback(host):
        return
    line = f"pid {os.getpid()} ({' '.join(sys.argv)[:200]}): connect to {address!r}"
    with open(_installed[0], "a", encoding="utf-8") as log:
        log.write(line + "\n")
    raise ConnectionRefusedError(f"tests may only connect to loopback addresses: {line}")


def install(log_path: str) -> None:
    """Refuse and record non-loopback connections of this process in ``log_path`` (one line
    each). Idempotent; an audit hook cannot be removed, so this lasts for the process."""
    if _installed:
        return
    _installed.append(log_path)
    sys.addaudithook(_hook)


if os.environ.get(LOG_VARIABLE):
    install(os.environ[LOG_VARIABLE])
