"""PlainEvents (the model client's stream class) yields what the SDK's own AsyncStream[object]
yields for the same bytes: both read the same answers from a server on 127.0.0.1 that sends
raw server-sent-event text cut into HTTP chunks at chosen places (every byte, every split
point), through the real SDK client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import anthropic
import pytest
from anthropic import AsyncStream

from lsp_agent.model.anthropic_sse import LineDecoder, PlainEvents
from lsp_agent.testing.http11 import head, read_request

TEST_KEY = "sk-test-not-a-real-key"

# What the Messages API sends, plus what the SSE format allows around it: a comment, a
# field without the space after its colon, data over two lines, an event without a name
# (skipped), one with a name and no data (skipped), ids and retry fields, an unknown field,
# blank lines in a row, non-ASCII text, JSON null, and an event left unfinished at the end.
WIRE = (
    ": a comment line\n"
    'event: message_start\ndata: {"type":"message_start","message":{"id":"m1"}}\n\n'
    'event: ping\ndata: {"type": "ping"}\n\n'
    'event:content_block_delta\ndata:{"type":"content_block_delta","index":0,\n'
    'data: "delta":{"type":"text_delta","text":"h\u00e9llo \U0001f600"}}\n\n'
    'data: {"type":"unnamed"}\n\n'
    "event: empty\n\n"
    "id: 7\nretry: 100\nunknown: x\n"
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n\n\n'
    "event: nothing\ndata: null\n\n"
    'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    'event: unfinished\ndata: {"type":"never"}\n'
)


class RawServer:
    """Answers every request with ``pieces``, each piece one HTTP chunk of an SSE response."""

    def __init__(self) -> None:
        self.pieces: Sequence[bytes] = ()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        # The client has hung up by now: each handler ends on its own.
        await asyncio.gather(*self._handlers)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while await read_request(reader) is not None:
                writer.write(
                    head(
                        200,
                        [("Content-Type", "text/event-stream"), ("Transfer-Encoding", "chunked")],
                    )
                )
                for piece in self.pieces:
                    writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()


Read = Callable[[Sequence[bytes], type[AsyncStream[Any]]], Any]


@pytest.fixture
async def read() -> AsyncIterator[Read]:
    """``await read(pieces, stream_cls)``: the items one streamed request yields."""
    server = RawServer()
    base_url = await server.start()
    client = anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=base_url, max_retries=0)

    async def run(pieces: Sequence[bytes], stream_cls: type[AsyncStream[Any]]) -> list[object]:
        server.pieces = pieces
        stream = await client.post(
            "/v1/messages", cast_to=object, content=b"{}", stream=True, stream_cls=stream_cls
        )
        async with stream:
            return [item async for item in stream]

    yield run
    await client.close()
    await server.stop()


def _cuts(data: bytes) -> list[list[bytes]]:
    """``data`` whole, byte by byte, and split in two at every position."""
    return [
        [data],
        [data[i : i + 1] for i in range(len(data))],
        *([data[:i], data[i:]] for i in range(1, len(data))),
    ]


@pytest.mark.parametrize(
    "newline",
    ["\n", "\r\n", "\r"],
    ids=["lf", "crlf", "cr"],
)
async def test_every_cut_of_the_stream_reads_as_the_sdk_reads_it(read: Read, newline: str) -> None:
    data = WIRE.replace("\n", newline).encode("utf-8")
    expected = await read([data], AsyncStream[object])
    assert {"type": "message_start", "message": {"id": "m1"}} in expected
    assert None in expected  # the JSON null
    assert len(expected) == 5
    for pieces in _cuts(data):
        assert await read(pieces, PlainEvents) == expected, pieces


async def test_line_ends_that_change_midway_read_as_the_sdk_reads_them(read: Read) -> None:
    first, _, rest = WIRE.partition("event: empty")
    data = (first + "event: empty" + rest.replace("\n", "\r\n")).encode("utf-8")
    expected = await read([data], AsyncStream[object])
    assert len(expected) == 5
    for pieces in _cuts(data):
        assert await read(pieces, PlainEvents) == expected, pieces


async def test_an_error_event_raises_the_sdk_s_own_error(read: Read) -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    data = (
        'event: message_start\ndata: {"type":"message_start","message":{}}\n\n'
        f"event: error\ndata: {json.dumps(error)}\n\n"
    ).encode()
    raised: list[BaseException] = []
    for stream_cls in (AsyncStream[object], PlainEvents):
        with pytest.raises(anthropic.APIStatusError) as info:
            await read([data], stream_cls)
        raised.append(info.value)
    sdk, ours = raised
    assert type(ours) is type(sdk)
    assert str(ours) == str(sdk)
    assert ours.body == sdk.body == error


async def test_an_error_event_whose_data_is_not_json_raises_with_the_text(read: Read) -> None:
    data = b"event: error\ndata: upstream\ndata: broke\n\n"
    with pytest.raises(anthropic.APIStatusError) as sdk:
        await read([data], AsyncStream[object])
    with pytest.raises(anthropic.APIStatusError) as ours:
        await read([data], PlainEvents)
    assert str(ours.value) == str(sdk.value)
    assert "upstream\nbroke" in str(ours.value)


def test_the_decoder_waits_for_the_end_of_a_line() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b"event: a\nda") == []
    assert decoder.feed(b"ta: 1\n") == []
    assert decoder.feed(b"\nevent: b") == [("a", "1")]
    assert decoder.fallback is None
    assert decoder.feed(b"\r\n") == []
    assert decoder.fallback == b"event: b\r\n"
