"""The daemon records a background run's end before it reaps the run's process, so `ps`
never reads a finished run as one whose process vanished unseen (reported as failed).

Each case runs in a fresh interpreter: reaping takes any ended child of the process, which
must not be another test's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_SCRIPT = r"""
import json, os, selectors, sys, time
from pathlib import Path
from lsp_agent.daemon import background, server
from lsp_agent.store import runs

folder = Path(sys.argv[1])
code = sys.argv[2]
pid = os.posix_spawn(sys.executable, [sys.executable, "-c", code], dict(os.environ))
record = runs.RunRecord(
    id="4948e781", session_id=None, pid=pid, cwd=str(folder), argv=("run", "-p", "x"),
    prompt="x", started=time.time(),
)
runs.write_record(folder, record)
state = server._State()
state.background[pid] = background.BackgroundRun(record=record)
seen = []
real = background.ended

def ended(runs_dir, run, exit_code):
    # What `lsp-agent ps` would read at this moment, before the end is written.
    seen.append([r.state for r in map(runs.effective, runs.list_runs(runs_dir))])
    real(runs_dir, run, exit_code)

background.ended = ended
deadline = time.monotonic() + 30
while state.background and time.monotonic() < deadline:
    server._reap(state, selectors.DefaultSelector(), folder)
    time.sleep(0.01)
after = [(r.state, r.exit_code) for r in runs.list_runs(folder)]
try:
    os.waitpid(pid, os.WNOHANG)
    reaped = False
except ChildProcessError:
    reaped = True
print(json.dumps({"seen": seen, "after": after, "reaped": reaped}))
"""


def _reap_one(tmp_path: Path, code: str) -> dict[str, object]:
    folder = tmp_path / "runs"
    folder.mkdir(mode=0o700, parents=True)
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(folder), code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_a_run_reads_as_running_until_its_end_is_recorded(tmp_path: Path) -> None:
    result = _reap_one(tmp_path, "raise SystemExit(3)")
    assert result["seen"] == [["running"]]
    assert result["after"] == [["failed", 3]]
    assert result["reaped"] is True


def test_a_run_that_exits_cleanly_is_done_and_one_killed_by_a_signal_gets_128_plus_n(
    tmp_path: Path,
) -> None:
    assert _reap_one(tmp_path / "a", "pass")["after"] == [["done", 0]]
    killed = _reap_one(tmp_path / "b", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert killed["after"] == [["failed", 137]]
