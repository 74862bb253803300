"""The language server's background warm-up also starts the search sentinel, so a session's
first Glob or Grep does not (checked in a process of its own: the sentinel is per process)."""

from __future__ import annotations

import subprocess
import sys

from lsp_agent.tools._leaf import SENTINEL_NAME

CHECK = f"""
import os, threading
from lsp_agent.lsp.warmup import WarmUp

def sentinels():
    mine = str(os.getpid())
    found = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{{pid}}/stat").read()
            cmdline = open(f"/proc/{{pid}}/cmdline", "rb").read()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == mine and {SENTINEL_NAME!r}.encode() in cmdline:
            found += 1
    return found

before = sentinels()
warm = WarmUp()
warm.start(sdk=False)
warm.wait_for_core()
for thread in threading.enumerate():
    if thread.name == "lsp-agent-warm-up":
        thread.join()
print(before, sentinels())
"""


def test_the_server_warm_up_starts_the_search_sentinel() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "0 1\n"
