"""Base-protocol framing of the LSP wire (``Content-Length`` headers, then a JSON body) that
recovers from malformed frames instead of going deaf.

The LSP base protocol (LSP 3.17 "Base Protocol"): a header part of ``Name: value`` lines ended
by ``\\r\\n``, an empty line, then exactly ``Content-Length`` bytes of body. pygls 2.1.1 matches
only ``^Content-Length: (\\d+)\\r\\n$`` at the start of a line, so one bad header makes every
later message share a line with the unframed body before it, for ever, and a huge length
crashes it (docs/pygls-workarounds.md). :class:`Framer` is lenient in what it reads and
resynchronises on the next header:

* header names are case-insensitive; ``\\n`` alone ends a line too;
* a ``Content-Length`` header is found anywhere in a line (after the unframed body of a bad
  frame, which has no trailing newline);
* a missing, negative, non-numeric or oversized length is reported (:class:`FrameError`) and
  skipped up to the next header;
* a body longer than its JSON value (length too large) gives back the bytes after the value
  when they start a header, so the next message is not lost.

:class:`Framer` does no I/O of its own: ``read`` is any coroutine returning the next bytes of
the stream (``b""`` at its end).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

MAX_BODY_BYTES = 256 * 1024 * 1024
"""Largest body accepted (bytes). Larger frames are refused and skipped: the limit keeps a
hostile length (10^14) from exhausting memory."""

MAX_HEADER_LINE_BYTES = 64 * 1024
"""A header line longer than this is discarded as noise (bytes), keeping only its tail in case
a ``Content-Length`` header starts there."""

_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*([^\r\n]*)", re.IGNORECASE)
_HEADER_START = b"content-length"
_OTHER_HEADER = re.compile(rb"^[A-Za-z][A-Za-z0-9-]*[ \t]*:")


@dataclass(frozen=True, slots=True)
class Frame:
    """One framed body (bytes, not yet decoded)."""

    body: bytes


@dataclass(frozen=True, slots=True)
class FrameError:
    """A frame that could not be read; ``message`` says why (it is skipped)."""

    message: str


class Framer:
    """Reads frames from ``read`` (``async () -> bytes``, ``b""`` at end of stream)."""

    def __init__(self, *, read: Callable[[], Awaitable[bytes]]) -> None:
        self._read = read
        self._buffer = bytearray()
        self._eof = False

    async def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = await self._read()
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    async def _line(self) -> bytes | None:
        """The next line including its ``\\n`` (``None`` at end of stream). Over-long lines
        are cut: the head is dropped, the tail kept."""
        while True:
            cut = self._buffer.find(b"\n")
            if cut >= 0:
                line = bytes(self._buffer[: cut + 1])
                del self._buffer[: cut + 1]
                return line
            if len(self._buffer) > MAX_HEADER_LINE_BYTES:
                del self._buffer[: len(self._buffer) - len(_HEADER_START) - 64]
            if not await self._fill():
                if self._buffer:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line
                return None

    async def _exactly(self, size: int) -> bytes | None:
        while len(self._buffer) < size:
            if not await self._fill():
                return None
        body = bytes(self._buffer[:size])
        del self._buffer[:size]
        return body

    async def next(self) -> Frame | FrameError | None:
        """The next frame, a :class:`FrameError` for a bad one, ``None`` at end of stream."""
        length: int | None = None
        problem: str | None = None
        in_headers = False
        while True:
            line = await self._line()
            if line is None:
                return None
            match = _LENGTH.search(line)
            if match is not None:
                in_headers = True
                length, problem = _parse_length(match.group(1).strip())
            elif line.strip():
                # Another header (Content-Type), or noise outside any frame: skipped.
                in_headers = in_headers or _OTHER_HEADER.match(line) is not None
            elif in_headers:
                break
        if problem is not None:
            return FrameError(problem)
        if length is None:
            return FrameError("a header part without a Content-Length header")
        body = await self._exactly(length)
        if body is None:
            return None
        return Frame(body=self._split_overrun(body))

    def _split_overrun(self, body: bytes) -> bytes:
        """A length too large swallows the start of the next header: when the body's JSON
        value ends early and what follows it starts a header, put those bytes back and return
        the body without them."""
        try:
            text = body.decode("utf-8")
            _value, end = json.JSONDecoder().raw_decode(text)
        except (ValueError, RecursionError):
            return body
        rest = text[end:].lstrip().encode("utf-8")
        if not rest:
            return body
        lowered = rest.lower()
        if _HEADER_START.startswith(lowered[: len(_HEADER_START)]) or _HEADER_START in lowered:
            self._buffer[:0] = rest
            return body[: len(body) - len(rest)]
        return body


def _parse_length(raw: bytes) -> tuple[int | None, str | None]:
    """``(length, None)`` or ``(None, why it is invalid)``."""
    text = raw.decode("ascii", "replace")
    if not text.isdigit() or not text.isascii():
        return None, f"invalid Content-Length {text[:40]!r}: not a non-negative integer"
    if len(text) > 12 or int(text) > MAX_BODY_BYTES:
        return None, (
            f"Content-Length {text[:40]} exceeds the limit of {MAX_BODY_BYTES} bytes; "
            "the frame was skipped"
        )
    return int(text), None
