"""The HTTP/1.1 framing the scripted Messages-API server needs: read one request (a
``Content-Length`` or chunked body), write a response head, frame one server-sent event as a
chunk. Only what the ``anthropic`` SDK's client sends is supported (RFC 9112 request line,
header fields, chunked transfer coding).
"""

from __future__ import annotations

import asyncio
import http
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 256 * 1024 * 1024


class BadRequestError(Exception):
    """The bytes on the wire are not an HTTP/1.1 request we can parse."""


@dataclass(frozen=True, kw_only=True)
class Request:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0].rstrip("/") or "/"

    @property
    def keep_alive(self) -> bool:
        return self.headers.get("connection", "").lower() != "close"


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """Read one request; ``None`` when the client closed the connection between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise BadRequestError("connection closed inside the request head") from exc
    except asyncio.LimitOverrunError as exc:
        raise BadRequestError("request head too large") from exc
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequestError(f"bad request line {lines[0]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequestError(f"bad header line {line!r}")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await read_chunked(reader)
    else:
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError as exc:
            raise BadRequestError("bad Content-Length") from exc
        if not 0 <= length <= MAX_BODY_BYTES:
            raise BadRequestError(f"Content-Length {length} out of range")
        body = await reader.readexactly(length)
    return Request(method=parts[0], target=parts[1], headers=headers, body=body)


async def read_chunked(reader: asyncio.StreamReader) -> bytes:
    data = bytearray()
    while True:
        size_line = await reader.readline()
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError as exc:
            raise BadRequestError("bad chunk size") from exc
        if size == 0:
            # Trailers (rare) end with an empty line.
            while (await reader.readline()).strip():
                pass
            return bytes(data)
        if len(data) + size > MAX_BODY_BYTES:
            raise BadRequestError("chunked body too large")
        data += await reader.readexactly(size)
        await reader.readline()


def status_line(status: int) -> bytes:
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = "Overloaded" if status == 529 else "Error"
    return f"HTTP/1.1 {status} {phrase}\r\n".encode("latin-1")


def head(status: int, headers: Sequence[tuple[str, str]]) -> bytes:
    lines = b"".join(f"{k}: {v}\r\n".encode("latin-1") for k, v in headers)
    return status_line(status) + lines + b"\r\n"


def sse_chunk(name: str, data: Mapping[str, Any]) -> bytes:
    payload = f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
    return b"%x\r\n%s\r\n" % (len(payload), payload)
