"""The LSP door's read loops over stdio and TCP, with our framing (:mod:`lsp_agent.lsp.framing`)
and intake (:meth:`lsp_agent.lsp.protocol.AgentProtocol.handle_body`) instead of pygls'
``run_async`` (docs/pygls-workarounds.md).

Stdin is read by a daemon thread: an exit (``exit``, end of input, SIGINT) never waits for a
thread blocked in a read, which left pygls' server alive and deaf after SIGINT.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, BinaryIO

from pygls.io_ import StdoutWriter

from lsp_agent.lsp.framing import FrameError, Framer

if TYPE_CHECKING:
    from lsp_agent.lsp.protocol import AgentProtocol

logger = logging.getLogger(__name__)

_READ_BYTES = 65536


async def pump(
    *, read: Callable[[], Awaitable[bytes]], protocol: AgentProtocol, stop: threading.Event
) -> None:
    """Feed every frame of the stream to ``protocol`` until the stream ends or ``stop`` is set.
    A bad frame is answered (``-32700``) and skipped; nothing read ends the loop but the end
    of the stream."""
    framer = Framer(read=read)
    while not stop.is_set():
        frame = await framer.next()
        if frame is None:
            logger.info("the client closed the connection")
            return
        if isinstance(frame, FrameError):
            protocol.frame_error(frame.message)
            continue
        protocol.handle_body(frame.body)


def stdin_reader(stream: BinaryIO) -> Callable[[], Awaitable[bytes]]:
    """``async () -> bytes`` reading ``stream`` on a daemon thread (``b""`` at its end).
    Must be called with the event loop running."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        fd = -1
    # The raw descriptor, not the buffered object: a daemon thread blocked inside a
    # BufferedReader holds its lock, and the interpreter aborts at exit when it cannot take it.
    read_some: Callable[[int], bytes] = (
        (lambda size: os.read(fd, size)) if fd >= 0 else getattr(stream, "read1", stream.read)
    )

    def run() -> None:
        while True:
            try:
                data = read_some(_READ_BYTES)
            except (OSError, ValueError):
                data = b""
            try:
                loop.call_soon_threadsafe(queue.put_nowait, data)
            except RuntimeError:  # the loop is closed: the server is exiting
                return
            if not data:
                return

    threading.Thread(target=run, name="lsp-stdin", daemon=True).start()
    return queue.get


def run_stdio(
    protocol: AgentProtocol, *, stdin: BinaryIO, stdout: BinaryIO, stop: threading.Event
) -> None:
    """Serve one client over ``stdin``/``stdout`` until ``exit`` or the end of input."""
    protocol.set_writer(StdoutWriter(stdout))

    async def main() -> None:
        await pump(read=stdin_reader(stdin), protocol=protocol, stop=stop)

    asyncio.run(main())


def run_tcp(protocol: AgentProtocol, *, host: str, port: int, stop: threading.Event) -> None:
    """Accept one client on ``host:port`` and serve it until ``exit`` or disconnection."""

    async def main() -> None:
        done = asyncio.get_running_loop().create_future()

        async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            protocol.set_writer(writer)
            try:
                await pump(read=lambda: reader.read(_READ_BYTES), protocol=protocol, stop=stop)
            finally:
                if not done.done():
                    done.set_result(None)

        server = await asyncio.start_server(connected, host, port)
        logger.info("serving on %s", ", ".join(str(s.getsockname()) for s in server.sockets))
        async with server:
            await done

    asyncio.run(main())
