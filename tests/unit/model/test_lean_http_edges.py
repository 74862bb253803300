"""The lean HTTP transport (lsp_agent.model.lean_http) against unusual but lawful answers and
uses: each answer runs through the lean transport and the SDK's default one and must end the
same way with both; a cancelled stream, concurrent requests, IPv6 and a base URL with a path
and a query on the lean transport itself."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import resource
import socket
import struct
from collections.abc import Iterator

import pytest

from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.base import ModelError
from lsp_agent.model.lean_client import LEAN_HTTP_ENV
from lsp_agent.model.lean_http import LeanTransport, lean_transport_applies
from lsp_agent.model.types import ResponseDone, TextDelta
from lsp_agent.testing.http11 import read_request
from tests.unit.model.conftest import TEST_KEY, simple_request
from tests.unit.model.test_anthropic_sse_garbage import END, START, _delta
from tests.unit.model.test_lean_http import SSE_HEAD, Answer, Misbehaving, both, sse, writes

# NO_PROXY too: a machine's NO_PROXY naming 127.0.0.1 would send the proxy test direct.
_PROXY_NAMES = (
    *("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"),
    *("NO_PROXY", "no_proxy"),
)


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in _PROXY_NAMES:
        monkeypatch.delenv(name, raising=False)
    yield


def _body(text: str) -> bytes:
    return (START + _delta(text) + END).encode()


def _error_json(status: int) -> bytes:
    return json.dumps(
        {"type": "error", "error": {"type": "authentication_error", "message": f"no {status}"}}
    ).encode()


_GZ = gzip.compress(_error_json(401))
_TRAILED = _body("trailed")


@pytest.mark.parametrize(
    ("name", "pieces", "close"),
    [
        (
            "Connection: close",
            (
                SSE_HEAD
                + b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(_TRAILED)
                + _TRAILED,
            ),
            False,
        ),
        (
            "HTTP/1.0, body to the close",
            (b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + _TRAILED,),
            True,
        ),
        ("100 Continue first", (b"HTTP/1.1 100 Continue\r\n\r\n" + sse("trailed"),), False),
        (
            "103 Early Hints first, in its own write",
            (b"HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n", sse("trailed")),
            False,
        ),
        (
            "chunked with trailers",
            (
                SSE_HEAD
                + b"Transfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"
                + b"%x\r\n%s\r\n" % (len(_TRAILED), _TRAILED)
                + b"0\r\nX-Sum: 1\r\n\r\n",
            ),
            False,
        ),
        ("401 without a body", (b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n",), False),
        ("401, no length, closed", (b"HTTP/1.1 401 Unauthorized\r\n\r\n",), True),
        (
            "gzip-encoded error body",
            (
                b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
                b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(_GZ) + _GZ,
            ),
            False,
        ),
        ("204 No Content", (b"HTTP/1.1 204 No Content\r\n\r\n",), False),
        ("304 Not Modified", (b"HTTP/1.1 304 Not Modified\r\n\r\n",), False),
    ],
)
async def test_lawful_answers_end_as_with_the_default_transport(
    name: str, pieces: tuple[bytes, ...], close: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = await both(writes(*pieces, close=close), monkeypatch)
    if "trailed" in repr(pieces):
        assert result == ("ok", "trailed", "True"), name
    else:
        assert result[0] == "error", name


async def test_a_large_answer_arriving_slowly(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "y" * 150_000  # more than one 64 KiB read
    body = _body(text)

    async def slow(_r: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        writer.write(SSE_HEAD + b"Content-Length: %d\r\n\r\n" % len(body))
        for start in range(0, len(body), 20_000):
            writer.write(body[start : start + 20_000])
            await writer.drain()
            await asyncio.sleep(0.01)
        return True

    assert await both(slow, monkeypatch) == ("ok", text, "True")


async def test_a_stream_cancelled_mid_body_is_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first answer stops after its first delta and waits; the caller's task is cancelled
    # there. The next request on the same client must go out on a new connection and succeed
    # (the half-read one would hand it the rest of the first answer).
    monkeypatch.setenv(LEAN_HTTP_ENV, "1")
    served: list[int] = []
    release = asyncio.Event()

    async def answer(_r: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        served.append(1)
        if len(served) == 1:
            head = START + _delta("first")
            writer.write(SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
            writer.write(b"%x\r\n%s\r\n" % (len(head), head.encode()))
            await writer.drain()
            await release.wait()
            rest = (_delta(" stale") + END).encode()
            writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(rest), rest))
            await writer.drain()
            return True
        writer.write(sse("fresh"))
        await writer.drain()
        return True

    server = Misbehaving(answer)
    base_url = await server.start()
    model = AnthropicModel(api_key=TEST_KEY, base_url=base_url, max_retries=0, timeout_s=5)
    first_seen = asyncio.Event()

    async def consume() -> None:
        async for event in model.stream(simple_request()):
            if isinstance(event, TextDelta):
                first_seen.set()

    try:
        task = asyncio.create_task(consume())
        async with asyncio.timeout(10):
            await first_seen.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        async with asyncio.timeout(10):
            events = [e async for e in model.stream(simple_request())]
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "fresh"
        assert isinstance(events[-1], ResponseDone)
        assert server.connections == 2
        transport = model._client._client._transport if model._client is not None else None
        assert isinstance(transport, LeanTransport)
    finally:
        await model.aclose()
        await server.stop()


async def test_concurrent_requests_on_one_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LEAN_HTTP_ENV, "1")

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        await asyncio.sleep(0.01 * (n % 3))
        writer.write(sse(f"answer-{id(writer)}"))
        await writer.drain()
        return True

    server = Misbehaving(answer)
    base_url = await server.start()
    model = AnthropicModel(api_key=TEST_KEY, base_url=base_url, max_retries=0, timeout_s=5)

    async def one() -> str:
        events = [e async for e in model.stream(simple_request())]
        assert isinstance(events[-1], ResponseDone)
        return "".join(e.text for e in events if isinstance(e, TextDelta))

    try:
        async with asyncio.timeout(20):
            for _ in range(3):
                texts = await asyncio.gather(*(one() for _ in range(8)))
                assert all(text.startswith("answer-") for text in texts)
        assert 2 <= server.connections <= 8 * 3
    finally:
        await model.aclose()
        await server.stop()


async def _raw_server(
    host: str, family: socket.AddressFamily, seen: list[tuple[str, str]]
) -> asyncio.Server:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (request := await read_request(reader)) is not None:
                seen.append((request.target, request.headers["host"]))
                writer.write(sse("reached"))
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    return await asyncio.start_server(serve, host, 0, family=family)


async def test_ipv6_and_a_base_url_with_a_path_and_a_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The request line and Host header are the SDK's and httpx2's doing: both transports must
    # put the same ones on the wire, to the bracketed IPv6 literal's address.
    seen: list[tuple[str, str]] = []
    server = await _raw_server("::1", socket.AF_INET6, seen)
    port = server.sockets[0].getsockname()[1]
    try:
        for lean in (True, False):
            monkeypatch.setenv(LEAN_HTTP_ENV, "1" if lean else "0")
            model = AnthropicModel(
                api_key=TEST_KEY, base_url=f"http://[::1]:{port}/prefix/api?tenant=a", max_retries=0
            )
            try:
                async with asyncio.timeout(10):
                    events = [e async for e in model.stream(simple_request())]
                assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "reached"
                transport = model._client._client._transport if model._client else None
                assert isinstance(transport, LeanTransport) == lean
            finally:
                await model.aclose()
    finally:
        server.close()
    assert len(seen) == 2 and seen[0] == seen[1]
    assert seen[0][0].startswith("/prefix/api") and "tenant=a" in seen[0][0]
    assert seen[0][1] == f"[::1]:{port}"


@pytest.mark.parametrize("name", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
async def test_a_proxy_in_the_environment_is_never_bypassed(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The endpoint itself refuses connections: the answer can only come through the proxy.
    targets: list[str] = []

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (request := await read_request(reader)) is not None:
                targets.append(request.target)
                writer.write(sse("proxied"))
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(proxy, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
    monkeypatch.setenv(LEAN_HTTP_ENV, "1")
    model = AnthropicModel(api_key=TEST_KEY, base_url="http://127.0.0.1:9", max_retries=0)
    try:
        async with asyncio.timeout(10):
            events = [e async for e in model.stream(simple_request())]
        transport = model._client._client._transport if model._client else None
    finally:
        await model.aclose()
        server.close()
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "proxied"
    assert targets == ["http://127.0.0.1:9/v1/messages"]
    assert not isinstance(transport, LeanTransport)


def test_no_proxy_alone_keeps_the_lean_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    # NO_PROXY only narrows proxies that are set; with none set there is nothing to bypass.
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "localhost,.internal")
    assert lean_transport_applies("https://api.anthropic.com")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:1")
    assert not lean_transport_applies("https://api.anthropic.com")


async def test_a_connect_timeout_is_named_as_with_the_default_transport(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A listening socket whose accept queue is full: the kernel drops further connection
    # attempts, so connecting waits until the connect timeout.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    results: list[tuple[str, ...]] = []
    try:
        for lean in (True, False):
            monkeypatch.setenv(LEAN_HTTP_ENV, "1" if lean else "0")
            model = AnthropicModel(
                api_key=TEST_KEY,
                base_url=f"http://127.0.0.1:{port}",
                max_retries=0,
                timeout_s=5,
                connect_timeout_s=0.3,
            )
            try:
                with pytest.raises(ModelError) as caught:
                    _ = [e async for e in model.stream(simple_request())]
                transport = model._client._client._transport if model._client else None
                assert isinstance(transport, LeanTransport) == lean
            finally:
                await model.aclose()
            err = caught.value
            results.append((str(err), str(err.kind), str(err.retryable), str(err.mid_stream)))
    finally:
        for filler in fillers:
            filler.close()
        listener.close()
    assert results[0] == results[1]
    assert "connect timeout of 0.3 s" in results[0][0] and results[0][1] == "timeout_error"


async def test_the_model_client_works_again_after_it_was_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(LEAN_HTTP_ENV, "1")
    server = Misbehaving(writes(sse("again"), close=False))
    base_url = await server.start()
    model = AnthropicModel(api_key=TEST_KEY, base_url=base_url, max_retries=0, timeout_s=5)
    try:
        for _ in range(2):
            async with asyncio.timeout(10):
                events = [e async for e in model.stream(simple_request())]
            assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "again"
            await model.aclose()  # its idle connection closes; the next request opens one
        assert server.connections == 2
    finally:
        await model.aclose()
        await server.stop()


async def test_a_kept_connection_on_a_high_descriptor_is_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A long-lived editor session can hold more than 1024 descriptors (files, watchers,
    # language servers): the idle check must not use select(), which refuses descriptors
    # from FD_SETSIZE (1024) up, so every request on a kept connection failed.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1200
    assert hard == resource.RLIM_INFINITY or hard >= wanted, "needs 1200 descriptors"
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    fillers: list[int] = []
    monkeypatch.setenv(LEAN_HTTP_ENV, "1")
    server = Misbehaving(writes(sse("high"), close=False))
    base_url = await server.start()
    model = AnthropicModel(api_key=TEST_KEY, base_url=base_url, max_retries=0, timeout_s=5)
    try:
        while not fillers or fillers[-1] < 1100:
            fillers.append(os.dup(0))
        for _ in range(3):
            async with asyncio.timeout(10):
                events = [e async for e in model.stream(simple_request())]
            assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "high"
        assert server.connections == 1
    finally:
        await model.aclose()
        await server.stop()
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _reset_after(*pieces: bytes) -> Answer:
    """An answer that writes ``pieces`` and then resets the connection (RST, not FIN)."""

    async def answer(_r: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
        await asyncio.sleep(0.05)  # the pieces reach the client before the reset
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        return False

    return answer


@pytest.mark.parametrize(
    "pieces",
    [(), (SSE_HEAD + b"Content-Length: 5000\r\n\r\n" + (START + _delta("x")).encode(),)],
    ids=["before the head", "mid-body"],
)
async def test_a_reset_connection_fails_as_with_the_default_transport(
    pieces: tuple[bytes, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    result = await both(_reset_after(*pieces), monkeypatch)
    assert result[0] == "error" and result[2] == "connection_error"
    assert result[4] == str(bool(pieces))  # mid-stream once the head arrived


async def test_bytes_after_a_whole_answer_are_never_taken_for_the_next_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A broken server (or one confused by a proxy in front of it) writes a second answer that
    # nobody asked for in the same segment as the first: those bytes sit in the HTTP parser,
    # not the socket, so the idle check alone keeps the connection, and the next request was
    # handed that stale answer (httpcore2's pool, the default transport, does so too). A
    # connection with unread bytes is closed instead.
    monkeypatch.setenv(LEAN_HTTP_ENV, "1")

    served: list[int] = []

    async def answer(_r: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        served.append(len(served) + 1)
        writer.write(sse(f"answer-{served[-1]}") + (sse("STALE") if served == [1] else b""))
        await writer.drain()
        return True

    server = Misbehaving(answer)
    base_url = await server.start()
    model = AnthropicModel(api_key=TEST_KEY, base_url=base_url, max_retries=0, timeout_s=5)
    texts: list[str] = []
    try:
        for _ in range(3):
            async with asyncio.timeout(10):
                events = [e async for e in model.stream(simple_request())]
            texts.append("".join(e.text for e in events if isinstance(e, TextDelta)))
    finally:
        await model.aclose()
        await server.stop()
    # A new connection after the first answer, then kept.
    assert texts == ["answer-1", "answer-2", "answer-3"]
    assert server.connections == 2
