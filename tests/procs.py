"""Finding this machine's live processes by their command line, for tests that check nothing
outlives the server (Linux ``/proc``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def live_pids(matches: Callable[[list[bytes]], bool]) -> list[int]:
    """The pids of running processes (not zombies or dead) whose NUL-split command line
    ``matches`` accepts (the last item of the list is the empty one after the final NUL)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X") and matches(cmdline.split(b"\0")):
            found.append(int(entry))
    return found


def live_pids_mentioning(marker: str) -> list[int]:
    """The pids of running processes whose command line contains ``marker``."""
    needle = marker.encode()
    return live_pids(lambda args: needle in b"\0".join(args))
