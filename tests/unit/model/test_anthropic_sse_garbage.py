"""A model endpoint that sends broken server-sent events: the model client fails with a
:class:`ModelError` naming the endpoint and the problem (what ``run -p`` shows as one
``lsp-agent: error:`` line, exit code 1), never with the decoder's own exception (which the
headless runner reports as an internal error, with a traceback from the title request).
The bytes come from a raw server on 127.0.0.1 through the real SDK client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from lsp_agent.model.base import ModelError
from lsp_agent.model.types import ResponseDone, TextDelta
from tests.unit.model.conftest import MakeModel, collect, simple_request
from tests.unit.model.test_anthropic_sse import RawServer

START = (
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1",'
    '"type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,'
    '"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
    "event: content_block_start\ndata: "
    '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
)
END = (
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
    '"usage":{"output_tokens":2}}\n\n'
    'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


def _delta(text: str) -> str:
    event = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}
    event["delta"]["text"] = text  # type: ignore[index]
    return f"event: content_block_delta\ndata: {json.dumps(event)}\n\n"


@pytest.fixture
async def raw() -> AsyncIterator[RawServer]:
    server = RawServer()
    await server.start()
    yield server
    await server.stop()


async def _base_url(server: RawServer) -> str:
    assert server._server is not None
    port = server._server.sockets[0].getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize(
    ("middle", "named"),
    [
        (b'event: content_block_delta\ndata: {"type":"content_blo\n\n', "not JSON"),
        (
            b"event: content_block_delta\ndata: "
            b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta",'
            b'"text":"\xff\xfe"}}\n\n',
            "not UTF-8",
        ),
    ],
    ids=["invalid-json", "non-utf8"],
)
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"], ids=["lf", "crlf"])
async def test_a_malformed_event_is_a_model_error_naming_the_endpoint(
    raw: RawServer, make_model: MakeModel, middle: bytes, named: str, newline: bytes
) -> None:
    body = START.encode() + _delta("before").encode() + middle + END.encode()
    raw.pieces = [body.replace(b"\n", newline)]
    base_url = await _base_url(raw)
    seen = []
    with pytest.raises(ModelError) as caught:
        async for event in make_model(base_url).stream(simple_request()):
            seen.append(event)
    message = str(caught.value)
    assert base_url in message
    assert "malformed event" in message
    assert named in message
    assert caught.value.mid_stream
    # (A text before it in the same received piece may or may not have been shown.)
    assert not any(isinstance(e, ResponseDone) for e in seen)


@pytest.mark.parametrize("data", [b"42", b"null", b'"text"', b"[1, 2]"])
async def test_an_event_whose_data_is_not_an_object_is_ignored(
    raw: RawServer, make_model: MakeModel, data: bytes
) -> None:
    raw.pieces = [
        START.encode()
        + b"event: content_block_delta\ndata: "
        + data
        + b"\n\n"
        + _delta("after").encode()
        + END.encode()
    ]
    events = await collect(make_model(await _base_url(raw)), simple_request())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["after"]
    assert isinstance(events[-1], ResponseDone)
