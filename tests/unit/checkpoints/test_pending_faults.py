"""Faults around a session's pending checkpoint file: a line cut short by a full disk (here a
file-size limit, so the kernel really writes part of it) costs only itself — the state before
it stands and the next line written after it is read whole — and complete lines that are not
checkpoints are skipped without hiding the lines after them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from lsp_agent.checkpoints.objects import ShadowStore, pending_path
from tests.unit.checkpoints.test_pending import _edit, _open, _project

# In a process whose files may not grow past a few bytes more than the pending file has:
# a new state of the checkpoint with a long prompt is written in part, then the disk is "full".
_TEAR = """
import errno, resource, sys
from pathlib import Path
from lsp_agent.checkpoints.objects import ShadowStore, pending_path

root, folder = Path(sys.argv[1]), Path(sys.argv[2])
store = ShadowStore(path=folder, root=root)
[checkpoint] = store.load("s1")
size = pending_path(folder, "s1").stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 40, resource.RLIM_INFINITY))
try:
    store.save_pending(checkpoint.model_copy(update={"prompt": "x" * 4096}))
except OSError as exc:
    assert exc.errno == errno.EFBIG, exc
    print("torn", flush=True)
"""


async def test_a_line_after_one_cut_short_by_a_full_disk_is_read(tmp_path: Path) -> None:
    root, folder = _project(tmp_path)
    cp, workspace = _open(root, folder)
    await cp.start_turn(message_id="m1", prompt="edit a and b")
    await _edit(workspace, root / "a.py", "a = 2\n")
    pending = pending_path(folder, "s1")
    before = pending.stat().st_size
    torn = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_TEAR), str(root), str(folder)],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
    )
    assert torn.stdout == b"torn\n", torn.stderr
    assert before < pending.stat().st_size  # part of the line is on disk
    assert not pending.read_bytes().endswith(b"\n")
    [checkpoint] = ShadowStore(path=folder, root=root).load("s1")
    assert list(checkpoint.files) == [str(root / "a.py")]  # the state before it stands

    # Space again: the next tool's state is read, and the next prompt folds it.
    await _edit(workspace, root / "b.py", "b = 2\n")
    [checkpoint] = ShadowStore(path=folder, root=root).load("s1")
    assert sorted(checkpoint.files) == [str(root / "a.py"), str(root / "b.py")]
    cp.end_turn()
    await cp.start_turn(message_id="m2", prompt="next")
    assert not pending.exists()
    first, _second = cp.list()
    assert sorted(first.files) == [str(root / "a.py"), str(root / "b.py")]


async def test_complete_lines_that_are_no_checkpoint_are_skipped(tmp_path: Path) -> None:
    root, folder = _project(tmp_path)
    cp, workspace = _open(root, folder)
    await cp.start_turn(message_id="m1", prompt="edit a and b")
    await _edit(workspace, root / "a.py", "a = 2\n")
    pending = pending_path(folder, "s1")
    with pending.open("ab") as handle:
        for junk in (b"\xff\xfe garbage", b"[1, 2]", b'{"seq": "x"}', b"[" * 100_000, b""):
            handle.write(junk + b"\n")
    await _edit(workspace, root / "b.py", "b = 2\n")
    [checkpoint] = ShadowStore(path=folder, root=root).load("s1")
    assert sorted(checkpoint.files) == [str(root / "a.py"), str(root / "b.py")]
