"""The lean HTTP transport under the SDK (lsp_agent.model.lean_http) against small real servers
on 127.0.0.1 that misbehave on purpose: every case runs through the lean transport and through
the SDK's default one, and the model client must end the same way with both (the same events,
or a ModelError with the same text, kind, retryability and mid-stream flag)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import httpx2
import pytest

from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.base import ModelError
from lsp_agent.model.lean_client import LEAN_HTTP_ENV
from lsp_agent.model.lean_http import LeanTransport, lean_transport_applies
from lsp_agent.model.types import ModelStreamEvent, ResponseDone, TextDelta
from lsp_agent.testing.http11 import read_request
from tests.unit.model.conftest import TEST_KEY, simple_request
from tests.unit.model.test_anthropic_sse_garbage import END, START, _delta
from tests.unit.model.test_tls import _certificate, _tls_endpoint

SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"

# Answer(reader, writer, number of the request on this connection): writes an answer; returns
# whether the connection may serve another request.
Answer = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[bool]]


def sse(text: str) -> bytes:
    """A whole answer: ``text`` as one text block, with a Content-Length."""
    body = (START + _delta(text) + END).encode()
    return SSE_HEAD + b"Content-Length: %d\r\n\r\n" % len(body) + body


class Misbehaving:
    """A server on 127.0.0.1 whose connections read requests and give them to ``answer``."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        number = 0
        try:
            while await read_request(reader) is not None:
                number += 1
                if not await self.answer(reader, writer, number):
                    break
        except ConnectionError:
            pass
        finally:
            writer.close()


Outcome = tuple[str, ...]


async def outcome(answer: Answer, monkeypatch: pytest.MonkeyPatch, *, lean: bool) -> Outcome:
    """How one request through the model client ends with ``answer`` as the server: the text
    received, or the ModelError's text, kind, retryability and mid-stream flag (port removed)."""
    monkeypatch.setenv(LEAN_HTTP_ENV, "1" if lean else "0")
    server = Misbehaving(answer)
    base_url = await server.start()
    model = AnthropicModel(api_key=TEST_KEY, base_url=base_url, max_retries=0, timeout_s=0.5)
    try:
        events: list[ModelStreamEvent] = [e async for e in model.stream(simple_request())]
        result: Outcome = (
            "ok",
            "".join(e.text for e in events if isinstance(e, TextDelta)),
            str(isinstance(events[-1], ResponseDone)),
        )
    except ModelError as err:
        text = str(err).replace(base_url, "ENDPOINT")
        result = ("error", text, str(err.kind), str(err.retryable), str(err.mid_stream))
    finally:
        transport = model._client._client._transport if model._client is not None else None
        await model.aclose()
        await server.stop()
    assert isinstance(transport, LeanTransport) == lean
    return result


async def both(answer: Answer, monkeypatch: pytest.MonkeyPatch) -> Outcome:
    """The outcome with the lean transport, checked equal to the default transport's."""
    lean = await outcome(answer, monkeypatch, lean=True)
    default = await outcome(answer, monkeypatch, lean=False)
    assert lean == default
    return lean


def writes(*pieces: bytes, close: bool = True, then_wait: bool = False) -> Answer:
    async def answer(_r: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
        if then_wait:
            await asyncio.sleep(3600)
        return not close

    return answer


async def test_a_whole_answer_and_connection_reuse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LEAN_HTTP_ENV, "1")
    server = Misbehaving(writes(sse("hi"), close=False))
    base_url = await server.start()
    model = AnthropicModel(api_key=TEST_KEY, base_url=base_url, max_retries=0, timeout_s=5)
    try:
        for _ in range(3):
            events = [e async for e in model.stream(simple_request())]
            assert isinstance(events[-1], ResponseDone)
        assert server.connections == 1  # kept alive between requests
    finally:
        await model.aclose()
        await server.stop()


async def test_a_kept_connection_the_server_closed_is_replaced_before_sending(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The server answers, then closes the idle connection: the next request goes out on a
    # fresh one and succeeds (no error, no retry needed).
    result = await both(writes(sse("again"), close=True), monkeypatch)
    assert result == ("ok", "again", "True")
    monkeypatch.setenv(LEAN_HTTP_ENV, "1")
    server = Misbehaving(writes(sse("again"), close=True))
    base_url = await server.start()
    model = AnthropicModel(api_key=TEST_KEY, base_url=base_url, max_retries=0, timeout_s=5)
    try:
        for _ in range(2):
            events = [e async for e in model.stream(simple_request())]
            assert isinstance(events[-1], ResponseDone)
            await asyncio.sleep(0.05)  # the close reaches the client while it is idle
        assert server.connections == 2
    finally:
        await model.aclose()
        await server.stop()


@pytest.mark.parametrize(
    ("name", "pieces"),
    [
        ("garbage status line", (b"HTTP/1.1 abc nonsense\r\n\r\n",)),
        ("not HTTP at all", (b"SSH-2.0-OpenSSH\r\n\r\n",)),
        ("closed before answering", ()),
        ("closed mid-headers", (SSE_HEAD,)),
        ("closed mid-body", (SSE_HEAD + b"Content-Length: 5000\r\n\r\n" + START.encode(),)),
        (
            "closed mid-chunk",
            (SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + b"400\r\n" + START.encode(),),
        ),
        ("bad chunk size", (SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nxx\r\n",)),
        (
            "oversized header block",
            (SSE_HEAD + b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * 1000) for i in range(120)),),
        ),
        (
            "Content-Length shorter than the body",
            (SSE_HEAD + b"Content-Length: %d\r\n\r\n" % len(START) + (START + END).encode(),),
        ),
        (
            "Content-Length longer than the body",
            (SSE_HEAD + b"Content-Length: 99999\r\n\r\n" + (START + END).encode(),),
        ),
        (
            "an error status with a JSON body",
            (
                b"HTTP/1.1 529 Overloaded\r\nContent-Type: application/json\r\n"
                b"Content-Length: 75\r\n\r\n"
                + json.dumps(
                    {"type": "error", "error": {"type": "overloaded_error", "message": "x"}}
                )
                .encode()
                .ljust(75),
            ),
        ),
    ],
)
async def test_broken_answers_fail_as_with_the_default_transport(
    name: str, pieces: tuple[bytes, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    result = await both(writes(*pieces), monkeypatch)
    # "Content-Length longer" ends with a close too: the stream is short of message_stop.
    assert result[0] == "error", name


async def test_an_endpoint_that_never_answers_names_the_read_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = await both(writes(then_wait=True), monkeypatch)
    assert result[0] == "error" and "read timeout of 0.5 s" in result[1]
    assert result[2] == "timeout_error"


async def test_a_stream_that_stalls_mid_body_names_the_read_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stalled = writes(SSE_HEAD + b"Content-Length: 5000\r\n\r\n" + START.encode(), then_wait=True)
    result = await both(stalled, monkeypatch)
    assert result[0] == "error" and "read timeout of 0.5 s" in result[1] and result[4] == "True"


async def test_a_refused_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    results = []
    for lean in (True, False):
        monkeypatch.setenv(LEAN_HTTP_ENV, "1" if lean else "0")
        model = AnthropicModel(api_key=TEST_KEY, base_url="http://127.0.0.1:9", max_retries=0)
        try:
            with pytest.raises(ModelError) as caught:
                _ = [e async for e in model.stream(simple_request())]
        finally:
            await model.aclose()
        results.append((caught.value.kind, caught.value.retryable, caught.value.mid_stream))
        assert "Cannot reach the model endpoint http://127.0.0.1:9" in str(caught.value)
        assert "ConnectionRefusedError" in str(caught.value)
    assert results[0] == results[1] == ("connection_error", True, False)


async def test_a_slow_body_within_the_read_timeout_arrives_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = (START + _delta("slow") + END).encode()

    async def slow(_r: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        writer.write(SSE_HEAD + b"Content-Length: %d\r\n\r\n" % len(body))
        for start in range(0, len(body), len(body) // 8 + 1):
            writer.write(body[start : start + len(body) // 8 + 1])
            await writer.drain()
            await asyncio.sleep(0.05)
        return True

    assert await both(slow, monkeypatch) == ("ok", "slow", "True")


async def test_a_long_event_in_one_byte_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "x" * 20_000
    body = (START + _delta(text) + END).encode()

    async def tiny(_r: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        writer.write(SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
        for i, byte in enumerate(body):
            writer.write(b"1\r\n%c\r\n" % byte)
            if i % 4096 == 0:
                await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    assert await both(tiny, monkeypatch) == ("ok", text, "True")


async def test_the_body_streams_as_it_arrives(monkeypatch: pytest.MonkeyPatch) -> None:
    # The server holds the rest of the answer back until the client has seen the first delta:
    # a transport that waited for the whole body would never finish.
    first_seen = asyncio.Event()

    async def held(_r: asyncio.StreamReader, writer: asyncio.StreamWriter, _n: int) -> bool:
        writer.write(SSE_HEAD + b"Transfer-Encoding: chunked\r\n\r\n")
        for piece in (START + _delta("first"),):
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece.encode()))
        await writer.drain()
        await first_seen.wait()
        rest = (_delta(" second") + END).encode()
        writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(rest), rest))
        await writer.drain()
        return True

    monkeypatch.setenv(LEAN_HTTP_ENV, "1")
    server = Misbehaving(held)
    base_url = await server.start()
    model = AnthropicModel(api_key=TEST_KEY, base_url=base_url, max_retries=0, timeout_s=5)
    texts: list[str] = []
    try:
        async with asyncio.timeout(10):
            async for event in model.stream(simple_request()):
                if isinstance(event, TextDelta):
                    texts.append(event.text)
                    first_seen.set()
    finally:
        await model.aclose()
        await server.stop()
    assert texts == ["first", " second"]


def test_a_proxy_or_another_scheme_keeps_the_default_transport() -> None:
    assert lean_transport_applies("https://api.anthropic.com", {})
    assert lean_transport_applies("http://127.0.0.1:1", {"NO_PROXY": "*"})
    assert not lean_transport_applies("https://api.anthropic.com", {"HTTPS_PROXY": "http://p:1"})
    assert not lean_transport_applies("https://api.anthropic.com", {"all_proxy": "socks5://p"})
    assert not lean_transport_applies("unix:///run/api.sock", {})


async def test_an_unsupported_scheme_is_refused_as_httpx2_does() -> None:
    import ssl

    transport = LeanTransport(ssl_context=ssl.create_default_context())
    async with httpx2.AsyncClient(transport=transport) as client:
        with pytest.raises(httpx2.UnsupportedProtocol):
            await client.get("ftp://127.0.0.1/")


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None] | None:
    for name in (
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    return None


async def test_https_with_the_test_ca_and_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Trusted through SSL_CERT_FILE: the answer arrives over TLS on the lean transport.
    # Another certificate, not trusted: both transports refuse it with the same error.
    cert, key = _certificate(tmp_path / "good")
    stranger, stranger_key = _certificate(tmp_path / "stranger")
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    results: list[tuple[str, ...]] = []
    for lean in (True, False):
        monkeypatch.setenv(LEAN_HTTP_ENV, "1" if lean else "0")
        for pem, pem_key in ((cert, key), (stranger, stranger_key)):
            async with _tls_endpoint(pem, pem_key, "Over TLS.") as url:
                model = AnthropicModel(api_key=TEST_KEY, base_url=url, max_retries=0)
                try:
                    events = [e async for e in model.stream(simple_request())]
                    text = "".join(e.text for e in events if isinstance(e, TextDelta))
                    results.append(("ok", text))
                except ModelError as err:
                    message = str(err).replace(url, "ENDPOINT")
                    results.append(("error", message, str(err.kind), str(err.retryable)))
                finally:
                    transport = model._client._client._transport if model._client else None
                    await model.aclose()
                assert isinstance(transport, LeanTransport) == lean
    assert results[:2] == results[2:]
    assert results[0] == ("ok", "Over TLS.")
    assert results[1][0] == "error" and "CERTIFICATE_VERIFY_FAILED" in results[1][1]
