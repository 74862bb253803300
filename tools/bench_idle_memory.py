#!/usr/bin/env python3
"""Idle memory of ``lsp-agent serve``: RSS and open file descriptors, with and without the SDK.

The real server runs over stdio against the scripted Messages-API server (127.0.0.1) in this
process; a minimal JSON-RPC client drives it. Reported (``VmRSS`` and the entries of
``/proc/<pid>/fd``):

- after ``initialize`` is answered (pygls and the door's small modules only);
- idle after ``initialized`` once the background warm-up is over (the agent core and the
  ``anthropic`` SDK imported: what an editor's server holds while nobody prompts), taken when
  the SDK's JSON extension (``jiter``) is mapped and the process has used no CPU for 2 s;
- after one session, then ``--sessions`` more, were each created, prompted (one text turn)
  and closed with ``lspAgent/session/close``; file descriptors must be back at the idle count
  (``tests/e2e/test_idle_memory.py`` asserts that and that no session object is alive; RSS
  is reported, not required: CPython seldom returns freed memory to the OS).

And, for the SDK's share, the same modules imported in a bare interpreter: the door's
start-up modules plus the agent core (:data:`lsp_agent.lsp.warmup.CORE_MODULES`), without and
then with ``anthropic``.

    python tools/bench_idle_memory.py [--sessions 10]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from lsp_agent.lsp import methods
from lsp_agent.lsp.warmup import CORE_MODULES
from lsp_agent.testing.scenario import reply, scenario
from lsp_agent.testing.scripted import scripted_env
from lsp_agent.testing.thread import ScriptedServerThread

WAIT_S = 120.0


class Client:
    """Requests to the server over its stdio; the server's own requests are answered null."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self._out: IO[bytes] = proc.stdin
        self._next = 0
        self._answers: dict[int, dict[str, Any]] = {}
        self._arrived = threading.Condition()
        threading.Thread(target=self._read, args=(proc.stdout,), daemon=True).start()

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self._out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self._out.flush()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = 0
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            message = json.loads(stream.read(length))
            if "method" in message and "id" in message:
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "id" in message:
                with self._arrived:
                    self._answers[message["id"]] = message
                    self._arrived.notify_all()

    def request(self, method: str, params: Any) -> Any:
        self._next += 1
        ident = self._next
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        with self._arrived:
            if not self._arrived.wait_for(lambda: ident in self._answers, WAIT_S):
                raise TimeoutError(method)
            answer = self._answers.pop(ident)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def cpu_ticks(pid: int) -> int:
    """User + system time of the process, in clock ticks (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def sdk_mapped(pid: int) -> bool:
    return "jiter" in Path(f"/proc/{pid}/maps").read_text()


def settled_rss(pid: int, *, quiet_s: float = 2.0) -> int:
    """RSS once the warm-up is over: the SDK is loaded (its ``jiter`` extension is mapped) and
    the process has used no CPU for ``quiet_s``."""
    last, since = cpu_ticks(pid), time.monotonic()
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = cpu_ticks(pid)
        if now != last or not sdk_mapped(pid):
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return rss_kib(pid)
    raise TimeoutError("the warm-up did not settle")


def import_rss(modules: Sequence[str]) -> int:
    """Peak RSS (KiB) of a bare interpreter that imports ``modules``."""
    code = (
        "import importlib, resource\n"
        f"for name in {list(modules)!r}: importlib.import_module(name)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="lsp-agent-idle-"))
    root = work / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    scripted = ScriptedServerThread(
        scenario=scenario(*(reply(f"answer {i}") for i in range(1 + args.sessions)), name="idle")
    )
    base_url = scripted.start()
    env = scripted_env(base_url)
    env.update(HOME=str(work / "home"), LSP_AGENT_DATA_DIR=str(work / "data"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=root,
        env=env,
    )
    rows: list[tuple[str, int, int]] = []
    try:
        client = Client(proc)
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": {},
                "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
                "initializationOptions": {"lspAgent": {"trusted": True}},
            },
        )
        rows.append(("after `initialize`", rss_kib(proc.pid), fds(proc.pid)))
        client.notify("initialized", {})
        idle = settled_rss(proc.pid)
        rows.append(("idle after `initialized` (core + SDK warmed)", idle, fds(proc.pid)))

        def one_session(i: int) -> None:
            session = client.request(methods.SESSION_NEW, {"cwd": str(root)})["sessionId"]
            client.request(
                methods.SESSION_PROMPT,
                {"sessionId": session, "prompt": [{"type": "text", "text": f"question {i}"}]},
            )
            client.request(methods.SESSION_CLOSE, {"sessionId": session})

        # The first session imports what the warm-up does not (the turn's own modules).
        one_session(0)
        rows.append(("after 1 session prompted and closed", rss_kib(proc.pid), fds(proc.pid)))
        for i in range(args.sessions):
            one_session(1 + i)
        rows.append(
            (
                f"after {args.sessions} more sessions prompted and closed",
                rss_kib(proc.pid),
                fds(proc.pid),
            )
        )
        client.request("shutdown", None)
        client.notify("exit", None)
        proc.wait(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
        scripted.stop()
    door = ["lsp_agent.lsp.server"]
    without_sdk = import_rss([*door, *CORE_MODULES])
    with_sdk = import_rss([*door, *CORE_MODULES, "anthropic"])
    load = os.getloadavg()[0]
    print(f"load average at the end {load:.1f}\n")
    print("| server state | RSS MiB | open fds |")
    print("| --- | ---: | ---: |")
    for name, rss, count in rows:
        print(f"| {name} | {rss / 1024:.1f} | {count} |")
    print("\n| bare interpreter importing | peak RSS MiB |")
    print("| --- | ---: |")
    print(f"| the door + agent core, no SDK | {without_sdk / 1024:.1f} |")
    print(f"| the door + agent core + `anthropic` | {with_sdk / 1024:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
