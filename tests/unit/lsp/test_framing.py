"""The door's framing recovers from every malformed frame and loses no following message."""

from __future__ import annotations

import json

from lsp_agent.lsp.framing import MAX_BODY_BYTES, Frame, FrameError, Framer


def _reader(data: bytes, chunk: int = 7):  # type: ignore[no-untyped-def]
    parts = [data[i : i + chunk] for i in range(0, len(data), chunk)]

    async def read() -> bytes:
        return parts.pop(0) if parts else b""

    return read


async def _all(data: bytes) -> list[Frame | FrameError]:
    framer = Framer(read=_reader(data))
    out: list[Frame | FrameError] = []
    while (item := await framer.next()) is not None:
        out.append(item)
    return out


def _msg(n: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "m"}).encode()


def _framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def test_plain_frames_lowercase_and_lf_only() -> None:
    data = _framed(_msg(1)) + b"content-length: %d\n\n" % len(_msg(2)) + _msg(2)
    assert await _all(data) == [Frame(_msg(1)), Frame(_msg(2))]


async def test_bad_lengths_are_reported_and_the_next_frame_is_found() -> None:
    for header in (b"Content-Length: -5", b"Content-Length: abc", b"Content-Type: x"):
        frames = await _all(header + b"\r\n\r\n" + _msg(1) + _framed(_msg(2)))
        assert isinstance(frames[0], FrameError), header
        assert frames[1:] == [Frame(_msg(2))], header


async def test_a_length_too_large_gives_the_next_header_back() -> None:
    body = _msg(1)
    data = b"Content-Length: %d\r\n\r\n" % (len(body) + 10) + body + _framed(_msg(2))
    assert await _all(data) == [Frame(body), Frame(_msg(2))]


async def test_a_length_too_small_loses_only_the_bad_frame() -> None:
    body = _msg(1)
    frames = await _all(b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body + _framed(_msg(2)))
    assert frames[0] == Frame(body[:-10])
    assert frames[-1] == Frame(_msg(2))


async def test_an_oversized_length_is_refused_without_reading_it() -> None:
    frames = await _all(b"Content-Length: %d\r\n\r\n{}" % (MAX_BODY_BYTES + 1) + _framed(_msg(2)))
    assert isinstance(frames[0], FrameError) and "exceeds the limit" in frames[0].message
    assert frames[-1] == Frame(_msg(2))
