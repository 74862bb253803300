"""The JSON-RPC endpoint over a real socket pair."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from lsp_agent.diagnostics.jsonrpc import (
    ConnectionClosedError,
    JsonRpcConnection,
    MethodNotFoundError,
    ResponseError,
    ServerNotReadingError,
)


class Peer:
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, **kw: Any
    ) -> None:
        self.notes: list[tuple[str, Any]] = []
        self.conn = JsonRpcConnection(
            reader=reader,
            writer=writer,
            on_notification=lambda m, p: self.notes.append((m, p)),
            on_request=self.answer,
            **kw,
        )
        self.task = asyncio.ensure_future(self.conn.run())

    async def answer(self, method: str, params: Any) -> Any:
        if method == "echo":
            return params
        if method == "fail":
            raise ValueError("nope")
        if method == "slow":
            await asyncio.sleep(10)
        raise MethodNotFoundError(method)


@pytest.fixture
async def pair() -> AsyncIterator[tuple[Peer, Peer, socket.socket]]:
    a, b = socket.socketpair()
    ra, wa = await asyncio.open_connection(sock=a)
    rb, wb = await asyncio.open_connection(sock=b)
    left, right = Peer(ra, wa, name="left"), Peer(rb, wb, name="right")
    yield left, right, b
    left.conn.close()
    right.conn.close()
    await asyncio.gather(left.task, right.task, return_exceptions=True)


async def test_requests_answers_errors_and_notifications(
    pair: tuple[Peer, Peer, socket.socket],
) -> None:
    left, right, _ = pair
    assert await left.conn.request("echo", {"x": "é😀"}, timeout=5) == {"x": "é😀"}
    with pytest.raises(ResponseError) as err:
        await left.conn.request("nothing", None, timeout=5)
    assert err.value.code == -32601
    with pytest.raises(ResponseError, match="nope"):
        await left.conn.request("fail", None, timeout=5)
    left.conn.notify("hello", [1])
    await left.conn.request("echo", 1, timeout=5)  # ordering: the notification came first
    assert right.notes == [("hello", [1])]


async def test_a_timeout_sends_cancel_and_the_peer_answers_cancelled(
    pair: tuple[Peer, Peer, socket.socket],
) -> None:
    left, _right, _ = pair
    with pytest.raises(TimeoutError):
        await left.conn.request("slow", None, timeout=0.05)
    # The late answer (an error for the cancelled request) is ignored; the connection lives on.
    assert await left.conn.request("echo", 2, timeout=5) == 2


async def test_pending_requests_fail_when_the_peer_goes_away(
    pair: tuple[Peer, Peer, socket.socket],
) -> None:
    left, right, _ = pair
    pending = asyncio.ensure_future(left.conn.request("slow", None, timeout=5))
    await asyncio.sleep(0.05)
    right.conn.close()
    with pytest.raises(ConnectionClosedError):
        await pending
    with pytest.raises(ConnectionClosedError):
        left.conn.notify("x")


async def test_an_oversized_message_ends_the_connection() -> None:
    a, b = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=a)
    peer = Peer(reader, writer, max_message_bytes=100, name="small")
    b.sendall(b"Content-Length: 5000\r\n\r\n")
    await asyncio.wait_for(peer.task, 5)
    assert peer.conn.closed is not None and "5000-byte message" in peer.conn.closed
    b.close()


async def test_garbage_ends_the_connection_with_a_reason() -> None:
    a, b = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=a)
    peer = Peer(reader, writer, name="g")
    b.sendall(b"Content-Length: 3\r\n\r\n{x}")
    await asyncio.wait_for(peer.task, 5)
    assert "invalid JSON" in (peer.conn.closed or "")
    b.close()


async def test_a_peer_that_does_not_read_is_cut_off() -> None:
    a, b = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=a)
    peer = Peer(reader, writer, max_write_buffer=64 * 1024, name="deaf")
    with pytest.raises(ServerNotReadingError):
        for _ in range(10_000):
            peer.conn.notify("spam", "x" * 1024)
    assert peer.conn.closed is not None
    await asyncio.gather(peer.task, return_exceptions=True)
    b.close()
