"""A raw stdio client for ``lsp-agent serve``: writes any bytes, reads framed answers.

Unlike pytest-lsp it lets a test send what a broken or hostile client would (bad headers,
non-JSON, invalid envelopes) and see exactly what comes back. A reader thread files every
answer by id; server -> client requests are answered with ``null``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# A test run started under nohup (or as a background job) hands SIGHUP/SIGINT to its children
# ignored; the server starts with the default dispositions, as it would from an editor.
SERVER = [
    sys.executable,
    "-c",
    "import signal\n"
    "for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM): signal.signal(s, signal.SIG_DFL)\n"
    "from lsp_agent.lsp.server import serve\n"
    "raise SystemExit(serve())",
]
WAIT_S = 20.0
"""Bound on waiting for one answer (s): past it the server counts as hung. Never a timing
assertion: a healthy server answers in milliseconds."""


def frame(body: bytes) -> bytes:
    """``body`` with its ``Content-Length`` header."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(message: Any) -> bytes:
    """A JSON value framed."""
    return frame(json.dumps(message).encode())


class RawServer:
    """One ``lsp-agent serve`` process over stdio (stderr to a log file)."""

    def __init__(self, *, root: Path, env: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.log = root.parent / f"server-{os.getpid()}-{time.monotonic_ns()}.log"
        full_env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            "HOME": str(root.parent),
            **(env or {}),
        }
        self._stderr = self.log.open("wb")
        self.proc = subprocess.Popen(
            SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=full_env,
            start_new_session=True,
        )
        self.answers: dict[Any, dict[str, Any]] = {}
        self.null_id_errors: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()

    # ---- reading -----------------------------------------------------------------------------

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self._cond:
                        self._cond.notify_all()
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n") and length is not None:
                    break
            message = json.loads(out.read(length))
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            with self._cond:
                if "method" in message:
                    self.notifications.append(message)
                elif message.get("id") is None:
                    self.null_id_errors.append(message)
                else:
                    self.answers[message["id"]] = message
                self._cond.notify_all()

    def wait_answer(self, msg_id: Any, timeout: float = WAIT_S) -> dict[str, Any] | None:
        """The answer to ``msg_id`` (``None`` if none came within ``timeout`` or the server
        exited)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while msg_id not in self.answers:
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and msg_id not in self.answers):
                    return None
                self._cond.wait(min(left, 0.5))
            return self.answers.pop(msg_id)

    def null_errors_since(self, count: int) -> list[dict[str, Any]]:
        with self._cond:
            return self.null_id_errors[count:]

    # ---- writing -----------------------------------------------------------------------------

    def write(self, data: bytes) -> bool:
        """Send raw bytes; ``False`` if the server's stdin is closed."""
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write(data)
            stdin.flush()
        except (BrokenPipeError, ValueError):
            return False
        return True

    def send(self, message: Any) -> bool:
        return self.write(encode(message))

    def new_id(self, prefix: str = "r") -> str:
        self._next += 1
        return f"{prefix}{self._next}"

    def request(
        self, method: str, params: Any = None, timeout: float = WAIT_S
    ) -> dict[str, Any] | None:
        msg_id = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.wait_answer(msg_id, timeout)

    def probe(self) -> bool:
        """Whether a valid ``lspAgent/session/list`` is still answered with a result."""
        answer = self.request("lspAgent/session/list", {})
        return answer is not None and "result" in answer

    def initialize(self) -> dict[str, Any] | None:
        answer = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": self.root.as_uri(),
                "capabilities": {},
                "workspaceFolders": [{"uri": self.root.as_uri(), "name": "ws"}],
            },
        )
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return answer

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> int | None:
        """Shut down (``shutdown``/``exit`` if alive), then kill; returns the exit code."""
        if self.alive():
            self.request("shutdown", timeout=5)
            self.send({"jsonrpc": "2.0", "method": "exit"})
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
        if self.alive():
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()
        return self.proc.returncode

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]
