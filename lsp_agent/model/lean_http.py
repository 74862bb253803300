"""A lean HTTP/1.1 transport for the SDK's HTTP client (``httpx2.AsyncClient(transport=...)``,
the SDK's documented ``http_client`` hook): the request's head and body leave in one write, and
the response body is handed on chunk by chunk as it arrives (streaming stays streaming).

Why: the default transport (``httpcore2``'s connection pool on ``anyio``) costs about a
millisecond of CPU per request in its layers of locks, traces and stream wrappers, and sends the
head and the body in two ``send`` calls. Everything above the transport is unchanged: the SDK
builds the request, authenticates, times out, maps errors; ``httpx2`` decodes
``Content-Encoding``.

The rules are ``httpcore2``'s, mirrored: ``h11`` parses and frames the messages (the same
library, the same limits: 100 KiB of head at most); a connection is kept for another request of
its origin only after its response was read to the end, nothing followed it, and both sides
allow keep-alive (``httpcore2`` keeps a connection whose answer was followed by bytes nobody
asked for, and hands them to the next request as its answer; here it is closed); an idle
connection is reused only while it is younger than the keep-alive expiry (5 s) and not readable
(a readable idle socket means the server closed it or sent bytes nobody asked for); a request is
never sent twice (a failure after sending is the caller's to retry, as with ``httpcore2``). Errors
are the ``httpx2`` classes the default transport raises for the same failure: ``ConnectError`` /
``ConnectTimeout`` (connect, TLS handshake), ``ReadError`` / ``ReadTimeout``, ``WriteTimeout``,
``RemoteProtocolError`` (malformed answer, or the server closed before answering); a write
error is suppressed, as ``httpcore2`` does, so that an answer the server sent before closing is
still read. The timeouts are the request's (``connect``, ``read``, ``write``).

:func:`lean_transport_applies` says when it is used: plain ``http`` or ``https`` and no proxy
in the environment; everything else (proxies, unix sockets, HTTP/2, the clouds' clients) keeps
the SDK's default transport.

This module imports ``httpx2`` and ``h11``: import it only where the SDK is loaded already.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
import time
import urllib.request
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

import h11
import httpx2

__all__ = ["KEEPALIVE_EXPIRY_S", "LeanTransport", "lean_transport_applies"]

KEEPALIVE_EXPIRY_S = 5.0
"""Seconds an idle connection stays usable (``httpx2``'s default keep-alive expiry)."""

_MAX_HEAD_BYTES = 100 * 1024
"""Most bytes of a response head (``httpcore2``'s ``MAX_INCOMPLETE_EVENT_SIZE``)."""

_READ_BYTES = 64 * 1024
_MAX_IDLE_PER_ORIGIN = 20

_Origin = tuple[bytes, str, int]


def lean_transport_applies(base_url: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether :class:`LeanTransport` can carry requests to ``base_url``: its scheme is ``http``
    or ``https`` and no proxy is configured (``urllib``'s ``getproxies``, which ``httpx2``
    reads: ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``... in any case; ``environ``: ``None``
    for ``os.environ``). A proxy, even one ``NO_PROXY`` would bypass, keeps the default
    transport, which knows all of their rules; ``NO_PROXY`` without a proxy does not."""
    scheme = base_url.partition("://")[0].lower()
    if scheme not in ("http", "https"):
        return False
    if environ is None:
        # ``getproxies`` also names NO_PROXY (as "no"), which alone sets no proxy.
        return all(scheme == "no" for scheme in urllib.request.getproxies())
    return not any(
        value and name.lower().endswith("_proxy") and name.lower() != "no_proxy"
        for name, value in environ.items()
    )


def _keepalive_options(sock: socket.socket) -> None:
    """The socket options the SDK's default client sets (TCP keep-alive probes after 60 s)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (("TCP_KEEPINTVL", 60), ("TCP_KEEPCNT", 5), ("TCP_KEEPIDLE", 60)):
        option = getattr(socket, name, None)
        if option is not None:
            sock.setsockopt(socket.IPPROTO_TCP, option, value)


def _readable(fd: int) -> bool:
    """Whether ``fd`` has data or an end of stream waiting, without waiting. ``poll`` where
    there is one, as ``httpcore2`` does: ``select`` refuses descriptors from ``FD_SETSIZE``
    (1024) up, which a long-lived editor session can reach."""
    if not hasattr(select, "poll"):
        readable, _, _ = select.select([fd], [], [], 0)
        return bool(readable)
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


@dataclass(kw_only=True, eq=False)
class _Connection:
    """One HTTP/1.1 connection and its ``h11`` state."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    state: h11.Connection = field(
        default_factory=lambda: h11.Connection(
            our_role=h11.CLIENT, max_incomplete_event_size=_MAX_HEAD_BYTES
        )
    )
    idle_since: float = 0.0

    def close(self) -> None:
        self.writer.close()

    def usable(self, now: float) -> bool:
        """Whether an idle connection can take a request: young enough, and nothing arrived
        since its last response (no data, no end of stream)."""
        if now - self.idle_since > KEEPALIVE_EXPIRY_S or self.writer.is_closing():
            return False
        if self.reader.at_eof() or self.reader.exception() is not None:
            return False
        # Bytes the event loop already took from the socket wait in the reader's buffer.
        if getattr(self.reader, "_buffer", b""):
            return False
        sock = self.writer.get_extra_info("socket")
        if sock is None:
            return True
        return not _readable(sock.fileno())

    async def next_event(self, timeout: float | None) -> h11.Event | type[h11.PAUSED]:
        """The next ``h11`` event of the response, reading as needed (``timeout``: seconds per
        read). Raises ``httpx2.ReadTimeout``, ``httpx2.ReadError`` or
        ``httpx2.RemoteProtocolError``."""
        while True:
            try:
                event = self.state.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx2.RemoteProtocolError(str(exc)) from exc
            if event is not h11.NEED_DATA:
                return event  # type: ignore[return-value]  # NEED_DATA was ruled out above
            try:
                async with asyncio.timeout(timeout):
                    data = await self.reader.read(_READ_BYTES)
            except TimeoutError as exc:
                raise httpx2.ReadTimeout("") from exc
            except OSError as exc:
                raise httpx2.ReadError("") from exc
            if data == b"" and self.state.their_state == h11.SEND_RESPONSE:
                # httpcore2's words, and its cause's type (an error message names the root).
                message = "Server disconnected without sending a response."
                raise httpx2.RemoteProtocolError(message) from h11.RemoteProtocolError(message)
            try:
                self.state.receive_data(data)
            except h11.RemoteProtocolError as exc:
                raise httpx2.RemoteProtocolError(str(exc)) from exc


class _Body(httpx2.AsyncByteStream):
    """A response's body as it arrives; closing it gives the connection back (when the
    response was read to its end and both sides keep the connection) or closes it."""

    def __init__(
        self,
        *,
        owner: LeanTransport,
        origin: _Origin,
        connection: _Connection,
        read_timeout: float | None,
    ) -> None:
        self._owner = owner
        self._origin = origin
        self._connection = connection
        self._read_timeout = read_timeout
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            while True:
                event = await self._connection.next_event(self._read_timeout)
                if isinstance(event, h11.Data):
                    yield bytes(event.data)
                elif isinstance(event, h11.EndOfMessage) or event is h11.PAUSED:
                    break
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._owner._release(self._origin, self._connection)


class LeanTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport over plain asyncio streams (see the module doc).
    ``ssl_context``: the context for ``https`` (the one the default transport would use; ALPN
    is set to ``http/1.1`` on it, as the default transport does). Raises
    ``httpx2.UnsupportedProtocol`` for a scheme other than ``http``/``https``."""

    def __init__(self, *, ssl_context: ssl.SSLContext) -> None:
        ssl_context.set_alpn_protocols(["http/1.1"])
        self._ssl_context = ssl_context
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request`` and return the response once its head arrived (the body is read as
        the caller iterates it). Raises the ``httpx2`` errors named in the module doc."""
        url = request.url
        scheme = url.raw_scheme
        if scheme not in (b"http", b"https"):
            raise httpx2.UnsupportedProtocol(
                f"Request URL has an unsupported protocol '{scheme!r}'."
            )
        host = url.raw_host.decode("ascii")
        port = url.port or (443 if scheme == b"https" else 80)
        origin: _Origin = (scheme, host, port)
        timeouts = request.extensions.get("timeout", {})
        body = b"".join([part async for part in request.stream])  # type: ignore[union-attr]
        connection = self._take_idle(origin) or await self._connect(origin, timeouts.get("connect"))
        try:
            try:
                wire = (
                    connection.state.send(
                        h11.Request(
                            method=request.method, target=url.raw_path, headers=request.headers.raw
                        )
                    )
                    or b""
                )
                if body:
                    wire += connection.state.send(h11.Data(data=body)) or b""
                wire += connection.state.send(h11.EndOfMessage()) or b""
            except h11.LocalProtocolError as exc:
                raise httpx2.LocalProtocolError(str(exc)) from exc
            await self._write(connection, wire, timeouts.get("write"))
            read_timeout = timeouts.get("read")
            while True:
                event = await connection.next_event(read_timeout)
                if isinstance(event, h11.Response):
                    break
                if isinstance(event, h11.InformationalResponse) and event.status_code == 101:
                    raise httpx2.RemoteProtocolError("Unexpected protocol upgrade")
        except BaseException:
            connection.close()
            raise
        return httpx2.Response(
            status_code=event.status_code,
            headers=event.headers.raw_items(),
            stream=_Body(
                owner=self, origin=origin, connection=connection, read_timeout=read_timeout
            ),
            extensions={
                "http_version": b"HTTP/" + event.http_version,
                "reason_phrase": event.reason,
            },
        )

    @staticmethod
    async def _write(connection: _Connection, wire: bytes, timeout: float | None) -> None:
        """Send ``wire`` in one write. A broken connection is not an error here (the answer
        the server sent before closing is read next, as ``httpcore2`` does); a write that does
        not finish in ``timeout`` s raises ``httpx2.WriteTimeout``."""
        try:
            connection.writer.write(wire)
            async with asyncio.timeout(timeout):
                await connection.writer.drain()
        except TimeoutError as exc:
            raise httpx2.WriteTimeout("") from exc
        except OSError:
            pass

    def _take_idle(self, origin: _Origin) -> _Connection | None:
        """A kept connection to ``origin`` that can take a request; stale ones are closed."""
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if connection.usable(now):
                return connection
            connection.close()
        return None

    async def _connect(self, origin: _Origin, timeout: float | None) -> _Connection:
        """A new connection (TLS for ``https``). Raises ``httpx2.ConnectTimeout`` or
        ``httpx2.ConnectError``."""
        scheme, host, port = origin
        tls = self._ssl_context if scheme == b"https" else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host,
                    port,
                    ssl=tls,
                    server_hostname=host if tls is not None else None,
                    limit=_READ_BYTES,
                )
        except TimeoutError as exc:
            raise httpx2.ConnectTimeout("") from exc
        except (OSError, ssl.SSLError) as exc:
            raise httpx2.ConnectError(str(exc)) from exc
        sock = writer.get_extra_info("socket")
        if sock is not None:
            _keepalive_options(sock)
        return _Connection(reader=reader, writer=writer)

    def _release(self, origin: _Origin, connection: _Connection) -> None:
        """Keep ``connection`` for ``origin`` when its exchange ended cleanly, else close it."""
        state = connection.state
        if (
            not self._closed
            and state.our_state is h11.DONE
            and state.their_state is h11.DONE
            # Bytes after the answer that nobody asked for wait in h11's buffer, where the
            # idle check does not look: kept, they would be the next request's "answer".
            and not state.trailing_data[0]
            and len(self._idle.get(origin, ())) < _MAX_IDLE_PER_ORIGIN
        ):
            state.start_next_cycle()
            connection.idle_since = time.monotonic()
            self._idle.setdefault(origin, []).append(connection)
        else:
            connection.close()

    async def aclose(self) -> None:
        """Close the idle connections; connections in use close when their response does."""
        self._closed = True
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()
