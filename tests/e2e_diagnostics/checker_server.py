"""A tiny, misbehaving-on-demand language server for diagnostics tests (stdlib only).

It reports one diagnostic per line containing ``ERROR`` (severity error, code ``E1``) or
``WARN`` (severity warning, code ``W1``), with source ``checker``. Documents are checked one
text at a time, in the order they arrive, each taking ``--delay-ms``; so with a delay, a report
for an older text can arrive after a newer text was sent, as with a slow real type checker.

Options::

    --delay-ms N       time to check one text (default 0)
    --no-version       publish without the document version
    --pull             offer pull diagnostics (textDocument/diagnostic) and answer them
    --crash-on WORD    exit with code 3 when a document text contains WORD
    --hang-initialize  never answer initialize
    --exit-at-start    write a message to stderr and exit with code 2 at once
    --flood N          report N diagnostics per check (all on line 0)
    --deaf             after initialize, read but never answer requests nor publish
    --out-of-range     report every diagnostic with a range far past the end of the text

Run as ``python checker_server.py [options]``; speaks LSP over stdin/stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from queue import Queue
from typing import Any

_lock = threading.Lock()


def send(message: dict[str, Any]) -> None:
    body = json.dumps(message).encode("utf-8")
    with _lock:
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sys.stdout.buffer.flush()


def read() -> dict[str, Any] | None:
    length = None
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line == b"\r\n":
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value.strip())
    assert length is not None
    data: dict[str, Any] = json.loads(sys.stdin.buffer.read(length))
    return data


def check(text: str, flood: int, out_of_range: bool) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if flood:
        return [
            {
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                "severity": 2,
                "code": "F1",
                "source": "checker",
                "message": f"flood {i}",
            }
            for i in range(flood)
        ]
    for number, line in enumerate(text.splitlines()):
        for word, severity, code in (("ERROR", 1, "E1"), ("WARN", 2, "W1")):
            column = line.find(word)
            if column < 0:
                continue
            start, end = column, column + len(word)
            line_no = number
            if out_of_range:
                line_no, start, end = number + 1000, 500, 900
            items.append(
                {
                    "range": {
                        "start": {"line": line_no, "character": start},
                        "end": {"line": line_no, "character": end},
                    },
                    "severity": severity,
                    "code": code,
                    "source": "checker",
                    "message": f"forbidden word {word}",
                }
            )
    return items


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay-ms", type=int, default=0)
    parser.add_argument("--no-version", action="store_true")
    parser.add_argument("--pull", action="store_true")
    parser.add_argument("--crash-on")
    parser.add_argument("--hang-initialize", action="store_true")
    parser.add_argument("--exit-at-start", action="store_true")
    parser.add_argument("--flood", type=int, default=0)
    parser.add_argument("--deaf", action="store_true")
    parser.add_argument("--out-of-range", action="store_true")
    args = parser.parse_args()
    if args.exit_at_start:
        sys.stderr.write("checker: refusing to start (--exit-at-start)\n")
        return 2

    texts: dict[str, tuple[int, str]] = {}
    work: Queue[tuple[str, int, str]] = Queue()

    def worker() -> None:
        while True:
            uri, version, text = work.get()
            time.sleep(args.delay_ms / 1000)
            params: dict[str, Any] = {
                "uri": uri,
                "diagnostics": check(text, args.flood, args.out_of_range),
            }
            if not args.no_version:
                params["version"] = version
            send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})

    threading.Thread(target=worker, daemon=True).start()
    initialized = False
    while True:
        message = read()
        if message is None:
            return 0
        method = message.get("method")
        params = message.get("params") or {}
        if method == "initialize":
            if args.hang_initialize:
                continue
            capabilities: dict[str, Any] = {"textDocumentSync": 1}
            if args.pull:
                capabilities["diagnosticProvider"] = {
                    "interFileDependencies": False,
                    "workspaceDiagnostics": False,
                }
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": capabilities}})
            initialized = True
            continue
        if args.deaf and initialized and method not in ("shutdown", "exit"):
            continue
        if method in ("textDocument/didOpen", "textDocument/didChange"):
            doc = params["textDocument"]
            text = (
                doc["text"] if method.endswith("didOpen") else params["contentChanges"][-1]["text"]
            )
            texts[doc["uri"]] = (doc["version"], text)
            if args.crash_on and args.crash_on in text:
                sys.stderr.write("checker: crashing on purpose\n")
                sys.stderr.flush()
                os._exit(3)
            if not args.pull:
                work.put((doc["uri"], doc["version"], text))
        elif method == "textDocument/diagnostic":
            uri = params["textDocument"]["uri"]
            _version, text = texts.get(uri, (0, ""))
            time.sleep(args.delay_ms / 1000)
            items = check(text, args.flood, args.out_of_range)
            send(
                {"jsonrpc": "2.0", "id": message["id"], "result": {"kind": "full", "items": items}}
            )
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "exit":
            return 0
        elif "id" in message:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {"code": -32601, "message": f"unsupported: {method}"},
                }
            )


if __name__ == "__main__":
    sys.exit(main())
