"""A checkpoint's state after each tool is a line in its session's pending file, folded into
the checkpoint's commit when the next prompt starts: every reader sees it before the fold, a
killed process loses none of it, a torn line costs only itself, and a fork copies it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pygit2

from lsp_agent.checkpoints.objects import ShadowStore, checkpoint_ref, pending_path, store_path
from lsp_agent.checkpoints.recorder import Checkpoints
from lsp_agent.checkpoints.records import Checkpoint
from lsp_agent.checkpoints.rewind import apply_rewind, checkpoints_from, plan_rewind
from lsp_agent.protocol.documents import FileChange
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.textfile import read_text_file
from lsp_agent.workspace.workspace import Workspace


def _project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.py").write_text("a = 1\n")
    (root / "b.py").write_text("b = 1\n")
    return root, store_path(tmp_path / "data" / "checkpoints", root)


def _open(root: Path, folder: Path, session: str = "s1") -> tuple[Checkpoints, Workspace]:
    host = DiskHost()
    workspace = Workspace(host=host, roots=(root,))
    checkpoints = Checkpoints(
        session_id=session, store=ShadowStore(path=folder, root=root), host=host
    )
    workspace.checkpoints = checkpoints
    return checkpoints, workspace


async def _edit(workspace: Workspace, path: Path, new_text: str) -> None:
    change = FileChange(path=path, base=read_text_file(path), new_text=new_text)
    assert (await workspace.apply([change], label="Edit")).applied


def _committed(store: ShadowStore, session: str, seq: int, message_id: str) -> Checkpoint:
    """The checkpoint as its commit holds it (not its pending state)."""
    commit = store.repo.references[checkpoint_ref(session, seq, message_id)].peel(pygit2.Commit)
    data = commit.tree["manifest.json"].peel(pygit2.Blob).data
    return Checkpoint.model_validate_json(data)


async def test_an_edit_is_a_pending_line_until_the_next_prompt_folds_it(tmp_path: Path) -> None:
    root, folder = _project(tmp_path)
    cp, workspace = _open(root, folder)
    await cp.start_turn(message_id="m1", prompt="edit a")
    await _edit(workspace, root / "a.py", "a = 2\n")
    pending = pending_path(folder, "s1")
    assert pending.is_file()
    assert _committed(cp.store, "s1", 1, "m1").files == {}
    assert list(cp.list()[0].files) == [str(root / "a.py")]
    cp.end_turn()

    await cp.start_turn(message_id="m2", prompt="next")
    assert not pending.exists()
    assert list(_committed(cp.store, "s1", 1, "m1").files) == [str(root / "a.py")]
    assert [c.message_id for c in cp.list()] == ["m1", "m2"]


async def test_a_torn_last_line_leaves_the_state_before_it(tmp_path: Path) -> None:
    root, folder = _project(tmp_path)
    cp, workspace = _open(root, folder)
    await cp.start_turn(message_id="m1", prompt="edit a and b")
    await _edit(workspace, root / "a.py", "a = 2\n")
    await _edit(workspace, root / "b.py", "b = 2\n")
    pending = pending_path(folder, "s1")
    data = pending.read_bytes()
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    # A crash in the middle of the second line's write.
    pending.write_bytes(data[: len(data) - len(last) // 2])
    [checkpoint] = ShadowStore(path=folder, root=root).load("s1")
    assert list(checkpoint.files) == [str(root / "a.py")]


async def test_a_fork_copies_the_pending_state(tmp_path: Path) -> None:
    root, folder = _project(tmp_path)
    cp, workspace = _open(root, folder)
    await cp.start_turn(message_id="m1", prompt="edit a")
    await _edit(workspace, root / "a.py", "a = 2\n")
    assert cp.store.copy_checkpoints("s1", "fork", ["m1"]) == 1
    [copied] = cp.store.load("fork")
    assert list(copied.files) == [str(root / "a.py")]


_EDIT_AND_WAIT = """
import asyncio, sys
from pathlib import Path
from lsp_agent.checkpoints.objects import ShadowStore
from lsp_agent.checkpoints.recorder import Checkpoints
from lsp_agent.protocol.documents import FileChange
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.textfile import read_text_file
from lsp_agent.workspace.workspace import Workspace

async def main() -> None:
    root, folder = Path(sys.argv[1]), Path(sys.argv[2])
    host = DiskHost()
    workspace = Workspace(host=host, roots=(root,))
    cp = Checkpoints(session_id="s1", store=ShadowStore(path=folder, root=root), host=host)
    workspace.checkpoints = cp
    await cp.start_turn(message_id="m1", prompt="edit a")
    path = root / "a.py"
    change = FileChange(path=path, base=read_text_file(path), new_text="a = 2  # agent\\n")
    assert (await workspace.apply([change], label="Edit")).applied
    print("edited", flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""


async def test_a_killed_process_keeps_its_edits_checkpoint(tmp_path: Path) -> None:
    root, folder = _project(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_EDIT_AND_WAIT), str(root), str(folder)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"edited\n"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert (root / "a.py").read_text() == "a = 2  # agent\n"

    # A new process (the session resumed) sees the edit and can undo it.
    cp, _ = _open(root, folder)
    host = DiskHost()
    chosen = checkpoints_from(cp.list(), "m1")
    targets, conflicts = plan_rewind(chosen, host=host, blobs=cp.store.get)
    result = await apply_rewind(targets, conflicts, host=host)
    assert result.failure is None and not result.conflicts
    assert (root / "a.py").read_text() == "a = 1\n"
    # Its next prompt folds what the killed process left into the commit.
    await cp.start_turn(message_id="m2", prompt="again")
    assert list(_committed(cp.store, "s1", 1, "m1").files) == [str(root / "a.py")]


def test_a_content_already_stored_is_refreshed_not_written_again(tmp_path: Path) -> None:
    root, folder = _project(tmp_path)
    store = ShadowStore(path=folder, root=root)
    blob = store.put(b"same\n")
    assert blob == str(pygit2.hash(b"same\n"))
    loose = folder / "objects" / blob[:2] / blob[2:]
    old = loose.stat().st_mtime - 7200
    os.utime(loose, (old, old))
    assert store.put(b"same\n") == blob
    # Fresh again: a collection in another process keeps it (it keeps objects under an hour).
    assert loose.stat().st_mtime > old + 3600
    assert store.get(blob) == b"same\n"
    assert not [p for p in (folder / "objects").iterdir() if p.name.startswith("tmp")]


async def test_a_fold_that_fails_keeps_the_lines_and_the_new_prompt(tmp_path: Path) -> None:
    root, folder = _project(tmp_path)
    cp, workspace = _open(root, folder)
    await cp.start_turn(message_id="m1", prompt="edit a")
    await _edit(workspace, root / "a.py", "a = 2\n")
    cp.end_turn()
    # A stale lock (a crashed writer's) on m1's reference: the fold cannot update it.
    ref = folder / checkpoint_ref("s1", 1, "m1")
    lock = ref.with_name(ref.name + ".lock")
    lock.mkdir()
    await cp.start_turn(message_id="m2", prompt="next")
    assert pending_path(folder, "s1").is_file()
    current = cp.current()
    assert current is not None and current.message_id == "m2"
    lock.rmdir()
    assert [list(c.files) for c in cp.list()] == [[str(root / "a.py")], []]


async def test_a_pending_file_past_its_bound_is_folded_at_once(tmp_path: Path) -> None:
    root, folder = _project(tmp_path)
    host = DiskHost()
    workspace = Workspace(host=host, roots=(root,))
    store = ShadowStore(path=folder, root=root)
    cp = Checkpoints(session_id="s1", store=store, host=host, pending_fold_bytes=1)
    workspace.checkpoints = cp
    await cp.start_turn(message_id="m1", prompt="edit a and b")
    await _edit(workspace, root / "a.py", "a = 2\n")
    assert not pending_path(folder, "s1").exists()
    assert list(_committed(store, "s1", 1, "m1").files) == [str(root / "a.py")]
    await _edit(workspace, root / "b.py", "b = 2\n")
    assert len(_committed(store, "s1", 1, "m1").files) == 2
