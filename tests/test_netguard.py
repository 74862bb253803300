"""The suite's loopback guard (``tests/conftest.py``): the real SDK client may reach the scripted
server on 127.0.0.1, directly or through a loopback proxy in front of a non-loopback URL; a
connection to any other address is refused and recorded, also from a subprocess. Uses
TEST-NET-1 (192.0.2.0/24, RFC 5737: reserved for documentation, never routed)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import anthropic
import pytest

from lsp_agent.testing.scenario import reply, scenario
from lsp_agent.testing.scripted import SCRIPTED_API_KEY
from lsp_agent.testing.thread import ScriptedServerThread
from tests.netguard import sitecustomize as netguard

UNROUTED = "192.0.2.1"


def _log() -> Path:
    return Path(os.environ[netguard.LOG_VARIABLE])


def _forget_attempts_since(size: int) -> str:
    """The attempts this test provoked on purpose; removed so the guard's fixture passes."""
    log = _log()
    text = log.read_text(encoding="utf-8")
    log.write_text(text[:size], encoding="utf-8")
    return text[size:]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        ("fe80::1%lo", False),
        (UNROUTED, False),
        ("0.0.0.0", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert netguard.is_loopback(host) is loopback


def test_the_sdk_reaches_the_scripted_server_on_loopback() -> None:
    with ScriptedServerThread(scenario=scenario(reply("hi"))) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key=SCRIPTED_API_KEY)
        message = client.messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hello"}]
        )
    assert message.content[0].text == "hi"  # type: ignore[union-attr]


def test_a_loopback_proxy_in_front_of_another_host_passes() -> None:
    # The SDK talks to an unrouted URL through a proxy on 127.0.0.1; the socket's peer is the
    # proxy. The scripted server answers the proxied request like any other.
    with ScriptedServerThread(scenario=scenario(reply("via proxy"))) as server:
        client = anthropic.Anthropic(
            base_url=f"http://{UNROUTED}:9",
            api_key=SCRIPTED_API_KEY,
            http_client=anthropic.DefaultHttpxClient(proxy=server.base_url),
            max_retries=0,
        )
        message = client.messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hello"}]
        )
    assert message.content[0].text == "via proxy"  # type: ignore[union-attr]


def test_the_sdk_pointed_elsewhere_is_refused_and_recorded() -> None:
    size = _log().stat().st_size
    client = anthropic.Anthropic(
        base_url=f"http://{UNROUTED}:9", api_key=SCRIPTED_API_KEY, max_retries=0
    )
    with pytest.raises(anthropic.APIConnectionError):
        client.messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hello"}]
        )
    assert f"connect to ('{UNROUTED}', 9)" in _forget_attempts_since(size)


def test_a_subprocess_is_guarded_too() -> None:
    size = _log().stat().st_size
    code = f"import socket; socket.create_connection(('{UNROUTED}', 9), timeout=5)"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode != 0
    assert "ConnectionRefusedError: tests may only connect to loopback" in proc.stderr
    assert f"connect to ('{UNROUTED}', 9)" in _forget_attempts_since(size)


def test_unix_sockets_are_local(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(path)
        listener.listen()
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
