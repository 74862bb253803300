"""Logging for the server process: never on stdout (the LSP wire in stdio mode).

Records go to stderr or a log file; :class:`ClientLogHandler` also forwards records at or above
a level (``initializationOptions.lspAgent.logLevel``, default WARNING) to the editor as
``window/logMessage``. pygls' own loggers are not forwarded: sending a message may log, and a
failing send would recurse.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

LEVELS = {
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}


def configure_logging(*, log_file: Path | None, level: int = logging.INFO) -> None:
    """Send the root logger to ``log_file`` (appending) or stderr. pygls logs every message
    body at INFO, so its loggers stay at WARNING unless ``level`` is DEBUG."""
    handler: logging.Handler
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_file, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("pygls").setLevel(
        logging.DEBUG if level <= logging.DEBUG else logging.WARNING
    )


class ClientLogHandler(logging.Handler):
    """Forwards log records to the client as ``window/logMessage`` once a transport exists."""

    def __init__(self, *, server: LanguageServer, level: int = logging.WARNING) -> None:
        super().__init__(level)
        self._server = server
        self._local = threading.local()
        self._loop: asyncio.AbstractEventLoop | None = None

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Records from other threads are sent through ``loop`` (the server's event loop)."""
        self._loop = loop

    def emit(self, record: logging.LogRecord) -> None:
        """Send ``record`` unless it comes from pygls or from inside a send."""
        if record.name == "pygls" or record.name.startswith("pygls."):
            return
        if getattr(self._local, "busy", False) or self._server.protocol.writer is None:
            return
        try:
            message = self.format(record)
        except Exception:
            return
        kind = _message_type(record.levelno)
        params = types.LogMessageParams(type=kind, message=message)
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is not None and running is not loop:
            loop.call_soon_threadsafe(self._send, params)
        else:
            self._send(params)

    def _send(self, params: types.LogMessageParams) -> None:
        self._local.busy = True
        try:
            self._server.window_log_message(params)
        except Exception:
            pass  # the transport is gone; nothing sensible left to do with a log line
        finally:
            self._local.busy = False


def _message_type(levelno: int) -> types.MessageType:
    if levelno >= logging.ERROR:
        return types.MessageType.Error
    if levelno >= logging.WARNING:
        return types.MessageType.Warning
    if levelno >= logging.INFO:
        return types.MessageType.Info
    return types.MessageType.Log
