"""``run -p`` honours the proxy in the environment it runs with, also when a daemon started
without one serves it: the model client is built in the run, from the run's environment, and
the lean HTTP transport steps aside for the SDK's default one whenever a proxy is set. The
endpoint itself refuses connections, so an answer can only come through the proxy."""

from __future__ import annotations

import os
import socket
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from lsp_agent.testing.scenario import reply, scenario
from lsp_agent.testing.thread import ScriptedServerThread
from tests.e2e_cli.conftest import cli_env, daemon_command, run_process

UNREACHABLE = "http://127.0.0.1:9"
_PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


class _ForwardProxy(socketserver.ThreadingTCPServer):
    """A plain-HTTP forward proxy on 127.0.0.1: each request (absolute-form target) is sent to
    ``upstream`` in origin form and its answer relayed; one request per connection."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, upstream: tuple[str, int]) -> None:
        super().__init__(("127.0.0.1", 0), _Relay)
        self.upstream = upstream
        self.targets: list[str] = []


class _Relay(socketserver.BaseRequestHandler):
    server: _ForwardProxy

    def handle(self) -> None:
        client: socket.socket = self.request
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = client.recv(65536)
            if not chunk:
                return
            data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        request_line, *header_lines = head.split(b"\r\n")
        method, target, _version = request_line.split(b" ")
        self.server.targets.append(target.decode())
        length = 0
        kept: list[bytes] = []
        for line in header_lines:
            name = line.split(b":", 1)[0].strip().lower()
            if name == b"content-length":
                length = int(line.split(b":", 1)[1])
            if name not in (b"connection", b"proxy-connection", b"keep-alive"):
                kept.append(line)
        while len(body) < length:
            chunk = client.recv(65536)
            if not chunk:
                return
            body += chunk
        parts = urlsplit(target.decode())
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        with socket.create_connection(self.server.upstream) as upstream:
            upstream.sendall(
                b"%s %s HTTP/1.1\r\n" % (method, path.encode())
                + b"\r\n".join(kept)
                + b"\r\nConnection: close\r\n\r\n"
                + body
            )
            while chunk := upstream.recv(65536):
                client.sendall(chunk)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Path]:
    """A private runtime directory; the daemon started in it is stopped afterwards."""
    base = tmp_path / "run"
    base.mkdir(mode=0o700)
    yield base
    _daemon("stop", base)


def _daemon(action: str, runtime: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k.upper() not in _PROXY_NAMES}
    return daemon_command(action, {**env, "XDG_RUNTIME_DIR": str(runtime)})


@pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="the daemon needs Linux peer credentials"
)
@pytest.mark.parametrize("through", ["daemon", "in-process"])
def test_a_proxy_in_the_runs_environment_is_used(
    tmp_path: Path, runtime: Path, through: str
) -> None:
    if through == "daemon":
        started = _daemon("start", runtime)  # its own environment names no proxy
        assert started.returncode == 0, started.stderr
    server = ScriptedServerThread(scenario=scenario(reply("Through the proxy.")), variables={})
    upstream = urlsplit(server.start())
    assert upstream.hostname is not None and upstream.port is not None
    proxy = _ForwardProxy((upstream.hostname, upstream.port))
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    env = {k: v for k, v in cli_env(UNREACHABLE).items() if k.upper() not in _PROXY_NAMES}
    env.update(
        XDG_RUNTIME_DIR=str(runtime),
        HTTP_PROXY=f"http://127.0.0.1:{proxy.server_address[1]}",
        LSP_AGENT_BACKGROUND_REQUESTS="0",
    )
    if through == "in-process":
        env["LSP_AGENT_NO_DAEMON"] = "1"
    project = tmp_path / "project"
    project.mkdir()
    try:
        proc = run_process(
            [sys.executable, "-m", "lsp_agent", "run", "-p", "say it", "--max-turns", "1"],
            cwd=project,
            env=env,
        )
    finally:
        proxy.shutdown()
        proxy.server_close()
        server.stop()
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "Through the proxy.\n", "")
    assert proxy.targets
    assert all(target.startswith(f"{UNREACHABLE}/v1/messages") for target in proxy.targets)
    if through == "daemon":
        assert "1 served" in _daemon("status", runtime).stdout
