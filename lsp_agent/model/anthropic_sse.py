"""The Messages API's server-sent events as plain JSON, decoded with fewer steps per event than
the SDK's ``AsyncStream``.

The SDK's decoder walks every received piece line by line, joining bytes and building an event
object per line group before the JSON is parsed; an answer of a dozen events pays that for each.
:class:`PlainEvents` is the SDK's ``AsyncStream`` (the ``stream_cls`` of ``client.post``, so the
SDK still opens, times out, maps errors and closes the response) with one change: the bytes are
cut into lines in bulk and each event's ``data`` goes straight to ``json.loads``.

What it yields is what ``AsyncStream[object]`` yields for the same bytes: the JSON of every
named event's ``data`` except ``ping``s and events without data, in order; an ``error`` event
raises the SDK's own status error (``client._make_status_error``, as the SDK does); the response
is closed when the stream ends or fails. Lines may end in ``\\n`` (what the API sends); a stream
that uses ``\\r`` in line ends is handed, from that point on, to the SDK's decoder, which knows
every form the SSE format allows.

This module imports the SDK: import it only where the SDK is loaded already.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from anthropic import AsyncStream
from anthropic._streaming import SSEDecoder

__all__ = ["LineDecoder", "PlainEvents"]

_SKIP = object()
"""What :meth:`PlainEvents._item` returns for an event the SDK's stream does not yield."""


class LineDecoder:
    """The SSE format's line rules (WHATWG "event stream interpretation"), for streams whose
    lines end in ``\\n``: :meth:`feed` takes received bytes and returns the complete events
    they finish as ``(event name or None, data)``; a partial line waits for the next call.
    ``fallback`` is set once a ``\\r`` arrives: the bytes from there on are not decoded here."""

    def __init__(self) -> None:
        self._pending: list[bytes] = []
        """Received bytes of a line not finished yet, joined once its end arrives (joining on
        every piece would copy a long event's bytes once per piece: quadratic)."""
        self._event: str | None = None
        self._data: list[str] = []
        self.fallback: bytes | None = None
        """The undecoded rest (a ``\\r`` was received), for the SDK's decoder; ``None``: none."""

    def feed(self, chunk: bytes) -> list[tuple[str | None, str]]:
        """The events ``chunk`` completes. Raises ``UnicodeDecodeError`` for a line that is not
        UTF-8 (as the SDK's decoder does)."""
        if self.fallback is not None:
            self.fallback += chunk
            return []
        # Only the new bytes are searched: the pending ones hold no line end.
        if b"\r" in chunk:
            self.fallback = self._rebuilt() + b"".join(self._pending) + chunk
            self._pending = []
            return []
        end = chunk.rfind(b"\n")
        if end < 0:
            self._pending.append(chunk)
            return []
        data = chunk
        if self._pending:
            self._pending.append(chunk)
            data = b"".join(self._pending)
            end += len(data) - len(chunk)
        rest = data[end + 1 :]
        self._pending = [rest] if rest else []
        events: list[tuple[str | None, str]] = []
        for line in data[:end].decode("utf-8").split("\n"):
            if not line:
                events.append((self._event or None, "\n".join(self._data)))
                self._event = None
                self._data = []
                continue
            if line[0] == ":":
                continue
            name, _, value = line.partition(":")
            if value[:1] == " ":
                value = value[1:]
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value
            # "id" and "retry" change nothing the Messages API's reader uses; other fields are
            # ignored by the format.
        return events

    def _rebuilt(self) -> bytes:
        """The lines of the event in progress, as received (for the SDK's decoder)."""
        lines = [] if self._event is None else [f"event: {self._event}\n"]
        lines.extend(f"data: {value}\n" for value in self._data)
        self._event = None
        self._data = []
        return "".join(lines).encode("utf-8")


class PlainEvents(AsyncStream[object]):
    """``AsyncStream[object]`` with :class:`LineDecoder` (see the module doc)."""

    async def __stream__(self) -> AsyncIterator[object]:
        response = self.response
        if (observer := self._observer) is not None:
            observer.begin()
        try:
            async for event, data in _events(response.aiter_bytes()):
                item = self._item(event, data)
                if item is not _SKIP:
                    yield item
            if (observer := self._observer) is not None:
                observer.end("read")
        except Exception as err:
            if (observer := self._observer) is not None:
                observer.end("failed", err)
            raise
        finally:
            if sys.is_finalizing():
                response.is_closed = True
            else:
                await response.aclose()

    def _item(self, event: str | None, data: str) -> object:
        """What the SDK's stream yields for one event, :data:`_SKIP` for one it skips; raises
        the SDK's status error for an ``error`` event."""
        if event is None or event == "ping":
            return _SKIP
        if event == "error":
            body: Any = data
            try:
                body = json.loads(data)
                message = f"{body}"
            except Exception:
                message = data or f"Error code: {self.response.status_code}"
            raise self._client._make_status_error(message, body=body, response=self.response)
        if not data:
            return _SKIP
        return json.loads(data)


async def _events(chunks: AsyncIterator[bytes]) -> AsyncIterator[tuple[str | None, str]]:
    """``(event name or None, data)`` of every event in ``chunks``."""
    decoder = LineDecoder()
    async for chunk in chunks:
        for pair in decoder.feed(chunk):
            yield pair
        if decoder.fallback is not None:
            break
    if decoder.fallback is not None:
        # The same iterator goes on where the loop above left it.
        async for sse in SSEDecoder().aiter_bytes(_then(decoder.fallback, chunks)):
            yield sse.event, sse.data


async def _then(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for chunk in rest:
        yield chunk
