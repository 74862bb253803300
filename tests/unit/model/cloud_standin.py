"""A local stand-in for the cloud endpoints the SDK's Bedrock and Vertex clients talk to, on
127.0.0.1, answering each request with one scripted response in the provider's own shape:

- Amazon Bedrock ``POST /model/{modelId}/invoke-with-response-stream``: the answer as AWS's
  binary event stream (``application/vnd.amazon.eventstream``), one frame per Messages-API
  event, each frame a ``chunk`` event whose JSON payload carries the event as base64
  ``bytes`` (the InvokeModelWithResponseStream format). The frame encoding follows AWS's
  "event stream encoding" spec: a 12-byte prelude (total length, headers length, CRC-32 of the
  first 8 bytes), typed headers (name length, name, type 7 = string, 2-byte value length,
  value), the payload, and a CRC-32 of everything before it; all integers big-endian.
- Vertex AI ``POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{m}``
  ``:streamRawPredict``:
  the answer as Server-Sent Events, like the Messages API.
- ``POST /token``: an OAuth 2.0 token endpoint, so Google service-account credentials whose
  ``token_uri`` points here can mint an access token without the network.

Every request is recorded (method, path, headers, parsed JSON body).
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import zlib
from dataclasses import dataclass
from typing import Any

from lsp_agent.testing.http11 import head, read_request, sse_chunk
from lsp_agent.testing.scenario import ScriptedResponse
from lsp_agent.testing.wire import render_events

HOST = "127.0.0.1"
FAKE_ACCESS_TOKEN = "ya29.standin-token"


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return (
        struct.pack(">B", len(raw_name))
        + raw_name
        + struct.pack(">BH", 7, len(raw_value))
        + raw_value
    )


def event_stream_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message (see the module doc for the layout)."""
    encoded = b"".join(_header(k, v) for k, v in headers.items())
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def bedrock_chunk(event: dict[str, Any]) -> bytes:
    """A ``chunk`` frame carrying one Messages-API stream event."""
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(event).encode()).decode()})
    return event_stream_frame(
        {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"},
        payload.encode(),
    )


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class CloudStandIn:
    """The stand-in on the running loop; ``answer`` is the response every model request gets."""

    def __init__(self, answer: ScriptedResponse) -> None:
        self.answer = answer
        self.seen: list[Seen] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> CloudStandIn:
        self._server = await asyncio.start_server(self._serve, HOST, 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://{HOST}:{self._server.sockets[0].getsockname()[1]}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (request := await read_request(reader)) is not None:
                if request.path == "/token":
                    form = request.body.decode()
                    self.seen.append(Seen(request.method, request.path, request.headers, form))
                    await self._json(
                        writer,
                        {
                            "access_token": FAKE_ACCESS_TOKEN,
                            "expires_in": 3600,
                            "token_type": "Bearer",
                        },
                    )
                    continue
                body = json.loads(request.body) if request.body else None
                self.seen.append(Seen(request.method, request.path, request.headers, body))
                events = render_events(
                    self.answer,
                    step=0,
                    request_model="standin",
                    request_bytes=len(request.body),
                    chunk_chars=8,
                )
                if request.path.endswith("/invoke-with-response-stream"):
                    frames = b"".join(bedrock_chunk(data) for _name, data in events)
                    writer.write(
                        head(
                            200,
                            [
                                ("Content-Type", "application/vnd.amazon.eventstream"),
                                ("Content-Length", str(len(frames))),
                            ],
                        )
                        + frames
                    )
                elif request.path.endswith(":streamRawPredict"):
                    writer.write(
                        head(
                            200,
                            [
                                ("Content-Type", "text/event-stream"),
                                ("Transfer-Encoding", "chunked"),
                            ],
                        )
                    )
                    for name, data in events:
                        writer.write(sse_chunk(name, data))
                    writer.write(b"0\r\n\r\n")
                else:
                    await self._json(writer, {"message": f"no route {request.path}"}, status=404)
                    continue
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _json(self, writer: asyncio.StreamWriter, payload: Any, status: int = 200) -> None:
        data = json.dumps(payload).encode()
        writer.write(
            head(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
            + data
        )
        await writer.drain()
