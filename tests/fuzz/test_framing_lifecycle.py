"""Framing faults and the LSP lifecycle against a real ``lsp-agent serve``: every bad frame is
answered or skipped, the next message is served, nothing crashes; spec error codes before
``initialize``, for a second one and after ``shutdown``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from .wire import RawServer, encode, frame


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    root = tmp_path / "ws"
    root.mkdir()
    raw = RawServer(root=root)
    yield raw
    raw.close()


def _list(msg_id: str) -> bytes:
    body = {"jsonrpc": "2.0", "id": msg_id, "method": "lspAgent/session/list", "params": {}}
    return json.dumps(body).encode()


def _framing_cases() -> list[tuple[str, bytes]]:
    body = _list("bad")
    n = len(body)
    return [
        ("length 10 too large", b"Content-Length: %d\r\n\r\n" % (n + 10) + body),
        ("length 10 too small", b"Content-Length: %d\r\n\r\n" % (n - 10) + body),
        ("no Content-Length", b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + body),
        ("negative length", b"Content-Length: -5\r\n\r\n" + body),
        ("non-numeric length", b"Content-Length: abc\r\n\r\n" + body),
        ("zero length", b"Content-Length: 0\r\n\r\n" + body),
        ("lowercase header", b"content-length: %d\r\n\r\n" % n + body),
        ("LF-only line ends", b"Content-Length: %d\n\n" % n + body),
        ("huge length 10^14", b"Content-Length: 99999999999999\r\n\r\n{}"),
        ("huge length 10^30", b"Content-Length: " + b"1" + b"0" * 30 + b"\r\n\r\n{}"),
        ("garbage line between messages", b"hello there\r\n"),
        ("Content-Type first", b"Content-Type: x\r\nContent-Length: %d\r\n\r\n" % n + body),
        (
            "two Content-Length headers",
            b"Content-Length: 3\r\nContent-Length: %d\r\n\r\n" % n + body,
        ),
        ("1 MB header line", b"X-Junk: " + b"a" * 1_000_000 + b"\r\n" + frame(body)),
    ]


def test_every_framing_fault_is_survived_and_the_next_message_served(server: RawServer) -> None:
    assert server.initialize() is not None
    problems = []
    for name, data in _framing_cases():
        assert server.write(data), f"{name}: the server closed its input"
        if not server.probe():
            problems.append(f"{name}: the next request was not answered")
        if not server.alive():
            problems.append(f"{name}: the server exited: {server.stderr()}")
            break
    assert problems == []


def test_bad_lengths_are_answered_with_a_parse_error(server: RawServer) -> None:
    assert server.initialize() is not None
    for data in (b"Content-Length: -5\r\n\r\n{}", b"Content-Length: 99999999999999\r\n\r\n{}"):
        before = len(server.null_errors_since(0))
        server.write(data)
        assert server.probe()
        errors = server.null_errors_since(before)
        assert [e["error"]["code"] for e in errors] == [-32700], errors
    assert "exceeds the limit" in server.null_errors_since(0)[-1]["error"]["message"]


def test_a_well_formed_message_after_an_overlong_frame_is_not_lost(server: RawServer) -> None:
    assert server.initialize() is not None
    body = _list("first")
    server.write(
        b"Content-Length: %d\r\n\r\n" % (len(body) + 10)
        + body
        + encode(
            {"jsonrpc": "2.0", "id": "second", "method": "lspAgent/session/list", "params": {}}
        )
    )
    assert server.wait_answer("first") is not None
    assert server.wait_answer("second") is not None


def test_lifecycle_error_codes(server: RawServer) -> None:
    before = server.request("lspAgent/session/list", {})
    assert before is not None and before["error"]["code"] == -32002
    new = server.request("lspAgent/session/new", {"cwd": str(server.root)})
    assert new is not None and new["error"]["code"] == -32002
    resolve = server.request(
        "codeAction/resolve", {"title": "x", "data": {"action": "ask", "uri": "file:///x.py"}}
    )
    assert resolve is not None and resolve["error"]["code"] == -32002
    # A notification before initialize is dropped without an answer or harm.
    server.send(
        {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {}}}
    )

    first = server.initialize()
    assert first is not None and "capabilities" in first["result"]
    again = server.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    assert again is not None and again["error"]["code"] == -32600
    created = server.request("lspAgent/session/new", {})
    assert created is not None and "sessionId" in created["result"], created

    shutdown_id = server.new_id()
    server.send({"jsonrpc": "2.0", "id": shutdown_id, "method": "shutdown"})
    during = server.request("lspAgent/session/new", {})
    assert during is not None and during["error"]["code"] == -32600, during
    assert server.wait_answer(shutdown_id) == {"jsonrpc": "2.0", "id": shutdown_id, "result": None}
    after = server.request("lspAgent/session/list", {})
    assert after is not None and after["error"]["code"] == -32600
    second_shutdown = server.request("shutdown")
    assert second_shutdown is not None and second_shutdown["error"]["code"] == -32600
    server.send({"jsonrpc": "2.0", "method": "exit"})
    assert server.proc.wait(20) == 0


def test_nested_jsonrpc_keys_do_not_make_a_message_disappear(server: RawServer) -> None:
    answer = server.request(
        "initialize",
        {
            "processId": None,
            "rootUri": server.root.as_uri(),
            "capabilities": {},
            "initializationOptions": {"lspAgent": {}, "myRpcTool": {"jsonrpc": "2.0", "port": 1}},
        },
    )
    assert answer is not None and "capabilities" in answer["result"]
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    listed = server.request("lspAgent/session/list", {"_meta": {"jsonrpc": "2.0"}})
    assert listed is not None and isinstance(listed["result"]["sessions"], list), listed


def test_sigint_ends_an_idle_server(server: RawServer) -> None:
    import signal

    assert server.initialize() is not None
    assert server.probe()
    server.proc.send_signal(signal.SIGINT)
    assert server.proc.wait(20) != 0  # exits (1: no shutdown was requested), not deaf and alive
