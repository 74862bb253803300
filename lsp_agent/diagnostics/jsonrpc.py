"""A small asyncio JSON-RPC 2.0 endpoint with LSP framing (``Content-Length`` headers).

Used to drive language servers the agent starts itself. It is deliberately tiny: pygls is a
server framework (and the core must not import it), and a client needs only requests with
timeouts, notifications, answers to the few server→client requests language servers send, and
hard limits so a misbehaving server cannot hold memory or the event loop.

Limits: a message body larger than ``max_message_bytes`` ends the connection
(:class:`ProtocolError`); more than ``max_write_buffer`` bytes queued towards a server that
does not read ends it too (:class:`ServerNotReadingError`). Every pending request fails with
:class:`ConnectionClosedError` when the connection ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

logger = logging.getLogger(__name__)

METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

NotificationHandler = Callable[[str, Any], None]
RequestHandler = Callable[[str, Any], Awaitable[Any]]


class RpcError(Exception):
    """Base of the errors of this module."""


class ResponseError(RpcError):
    """The peer answered a request with an error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.data = data


class MethodNotFoundError(RpcError):
    """Raise from a request handler to answer -32601."""


class ConnectionClosedError(RpcError):
    """The connection ended (the peer exited or broke the protocol) before the answer came."""


class ProtocolError(RpcError):
    """The peer sent something that is not LSP-framed JSON-RPC."""


class ServerNotReadingError(RpcError):
    """Too much data is queued for a peer that does not read it."""


class JsonRpcConnection:
    """One JSON-RPC connection over a pair of streams.

    ``on_notification(method, params)`` is called for every notification (synchronously, on
    the read loop: keep it cheap); ``on_request(method, params)`` answers server→client
    requests (raise :class:`MethodNotFoundError` for unknown ones). Start :meth:`run` as a task;
    it returns when the peer closes the stream.
    """

    def __init__(
        self,
        *,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_notification: NotificationHandler,
        on_request: RequestHandler,
        max_message_bytes: int = 64 * 1024 * 1024,
        max_write_buffer: int = 32 * 1024 * 1024,
        name: str = "peer",
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_notification = on_notification
        self._on_request = on_request
        self._max_message = max_message_bytes
        self._max_write_buffer = max_write_buffer
        self._name = name
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed: str | None = None

    @property
    def closed(self) -> str | None:
        """Why the connection ended, or ``None`` while it is open."""
        return self._closed

    # ---- sending -------------------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        if self._closed is not None:
            raise ConnectionClosedError(f"{self._name}: connection closed ({self._closed})")
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        transport = self._writer.transport
        if transport.get_write_buffer_size() + len(body) > self._max_write_buffer:
            self.close(f"{self._name} stopped reading its input")
            raise ServerNotReadingError(f"{self._name} stopped reading its input")
        self._writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification. Raises :class:`ConnectionClosedError` or
        :class:`ServerNotReadingError`."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    async def request(self, method: str, params: Any = None, *, timeout: float) -> Any:
        """Send a request and wait at most ``timeout`` seconds for its result.

        Raises :class:`ResponseError` for an error answer, ``TimeoutError`` (after sending
        ``$/cancelRequest``), :class:`ConnectionClosedError` when the connection ends first.
        Cancelling the caller also sends ``$/cancelRequest``.
        """
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self._send(message)
            async with asyncio.timeout(timeout):
                return await future
        except (TimeoutError, asyncio.CancelledError):
            if self._closed is None:
                with contextlib.suppress(RpcError):
                    self.notify("$/cancelRequest", {"id": msg_id})
            raise
        finally:
            self._pending.pop(msg_id, None)

    # ---- receiving -----------------------------------------------------------------------------

    async def run(self) -> None:
        """Read and dispatch messages until the stream ends or breaks the protocol."""
        reason = "the peer closed the connection"
        try:
            while True:
                body = await self._read_message()
                if body is None:
                    break
                try:
                    message = json.loads(body)
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise ProtocolError(f"{self._name} sent invalid JSON: {exc}") from None
                self._dispatch(message)
        except ProtocolError as exc:
            reason = str(exc)
            logger.warning("%s", exc)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            reason = f"connection lost: {exc}"
        finally:
            self.close(reason)

    async def _read_message(self) -> bytes | None:
        length: int | None = None
        while True:
            try:
                line = await self._reader.readuntil(b"\r\n")
            except asyncio.IncompleteReadError as exc:
                if exc.partial:
                    raise ProtocolError(f"{self._name} ended in the middle of a header") from None
                return None
            except asyncio.LimitOverrunError:
                raise ProtocolError(f"{self._name} sent an overlong header line") from None
            if line == b"\r\n":
                break
            name, sep, value = line.decode("ascii", "replace").partition(":")
            if not sep:
                raise ProtocolError(f"{self._name} sent a malformed header: {line[:80]!r}")
            if name.strip().lower() == "content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    raise ProtocolError(f"{self._name} sent a bad Content-Length") from None
        if length is None or length < 0:
            raise ProtocolError(f"{self._name} sent a message without Content-Length")
        if length > self._max_message:
            raise ProtocolError(
                f"{self._name} sent a {length}-byte message (limit {self._max_message} bytes)"
            )
        return await self._reader.readexactly(length)

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            logger.warning("%s sent a non-object message; ignored", self._name)
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                task = asyncio.ensure_future(
                    self._answer(message["id"], method, message.get("params"))
                )
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            else:
                try:
                    self._on_notification(method, message.get("params"))
                except Exception:  # a handler bug must not end the connection
                    logger.exception("%s: handling %s failed", self._name, method)
            return
        msg_id = message.get("id")
        future = self._pending.get(msg_id) if isinstance(msg_id, int) else None
        if future is None or future.done():
            return  # an answer we stopped waiting for
        error = message.get("error")
        if isinstance(error, dict):
            future.set_exception(
                ResponseError(
                    int(error.get("code", INTERNAL_ERROR)),
                    str(error.get("message", "error")),
                    error.get("data"),
                )
            )
        else:
            future.set_result(message.get("result"))

    async def _answer(self, msg_id: Any, method: str, params: Any) -> None:
        response: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
        try:
            response["result"] = await self._on_request(method, params)
        except MethodNotFoundError:
            response["error"] = {"code": METHOD_NOT_FOUND, "message": f"unsupported: {method}"}
        except asyncio.CancelledError:
            response["error"] = {"code": REQUEST_CANCELLED, "message": "cancelled"}
        except Exception as exc:
            logger.exception("%s: answering %s failed", self._name, method)
            response["error"] = {"code": INTERNAL_ERROR, "message": str(exc)}
        with contextlib.suppress(RpcError):
            self._send(response)

    # ---- closing -------------------------------------------------------------------------------

    def close(self, reason: str = "closed") -> None:
        """End the connection: fail pending requests, cancel running answers, close the
        writer. Idempotent."""
        if self._closed is not None:
            return
        self._closed = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosedError(f"{self._name}: {reason}"))
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            self._writer.close()
        # End the read loop too: a closed transport delivers no EOF by itself.
        self._reader.feed_eof()
