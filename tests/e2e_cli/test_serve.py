"""``lsp-agent serve`` through the CLI: stdout carries only LSP frames, logs go to stderr or
the log file, and a proper shutdown exits 0."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

TIMEOUT_S = 60


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def parse_frames(data: bytes) -> list[dict[str, Any]]:
    """Every byte of ``data`` must belong to a well-formed LSP frame."""
    messages = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, f"stray bytes on stdout: {data[:200]!r}"
        headers = dict(line.split(": ", 1) for line in head.decode("ascii").split("\r\n") if line)
        length = int(headers["Content-Length"])
        messages.append(json.loads(rest[:length]))
        data = rest[length:]
    return messages


class Wire:
    """Drives a server subprocess over stdio, keeping every byte it writes to stdout."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.raw = b""

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(message))
        self.proc.stdin.flush()

    def response(self, msg_id: int) -> dict[str, Any]:
        """Read frames until the response to ``msg_id`` (other messages are kept in raw)."""
        assert self.proc.stdout is not None
        while True:
            head = b""
            while not head.endswith(b"\r\n\r\n"):
                byte = self.proc.stdout.read(1)
                assert byte, "the server closed stdout"
                head += byte
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            body = self.proc.stdout.read(length)
            self.raw += head + body
            message: dict[str, Any] = json.loads(body)
            if message.get("id") == msg_id and "method" not in message:
                return message


def run_session(tmp_path: Path, *flags: str) -> tuple[int, bytes, bytes, dict[str, Any]]:
    """initialize, initialized, shutdown (waiting for its answer, as clients do), exit."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "serve", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wire = Wire(proc)
    try:
        wire.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}},
            }
        )
        init = wire.response(1)
        wire.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        wire.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        assert wire.response(2)["result"] is None
        wire.send({"jsonrpc": "2.0", "method": "exit"})
        rest, err = proc.communicate(timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, wire.raw + rest, err, init


def test_stdio_stdout_is_only_the_wire(tmp_path: Path) -> None:
    code, out, err, init = run_session(tmp_path, "--stdio", "--log-level", "debug")
    assert code == 0, err.decode()
    parse_frames(out)  # every byte on stdout belongs to an LSP frame
    assert init["result"]["serverInfo"]["name"] == "lsp-agent"
    assert b"DEBUG" in err  # the log went to stderr, at the level asked for


def test_log_file(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    code, out, err, _ = run_session(tmp_path, "--log-file", str(log))
    assert code == 0, err.decode()
    parse_frames(out)
    assert "initialize" in log.read_text()
