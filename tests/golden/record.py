"""Re-record the golden transcripts: ``python -m tests.golden.record [pytest args]``.

Runs ``tests/golden`` with recording switched on, so each case writes its transcript instead
of comparing it. Record only for an intended behaviour change, and review the diff
(``git diff tests/golden``) before committing it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.golden.test_golden import RECORD


def main(argv: list[str]) -> int:
    """Run pytest on this folder with ``LSP_AGENT_RECORD_GOLDEN=1``; returns its exit code."""
    here = Path(__file__).parent
    env = {**os.environ, RECORD: "1"}
    command = [sys.executable, "-m", "pytest", str(here), "-q", "-p", "no:cacheprovider", *argv]
    return subprocess.call(command, env=env, cwd=here.parents[1])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
