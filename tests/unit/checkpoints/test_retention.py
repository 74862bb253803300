"""Checkpoint retention in a real shadow git store: the checkpoints of a session whose
transcript is gone are removed once old, with the objects only they referenced; the
checkpoints of a saved session, and everything they need, stay."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lsp_agent.checkpoints.objects import ShadowStore, store_path
from lsp_agent.checkpoints.recorder import Checkpoints
from lsp_agent.checkpoints.retention import DAY_S, collect
from lsp_agent.checkpoints.rewind import apply_rewind, checkpoints_from, plan_rewind
from lsp_agent.protocol.documents import FileChange
from lsp_agent.workspace.disk_host import DiskHost

LATER = time.time() + 40 * DAY_S
"""A time when every checkpoint written by the test is 40 days old."""


async def _two_sessions(tmp_path: Path) -> tuple[Path, Checkpoints, Checkpoints, str]:
    """Session "gone" creates g.py, which the user deletes; session "kept" then changes a.py
    by a shell command. Returns the project, both recorders and the blob only "gone"
    references (g.py's content)."""
    root = tmp_path / "proj"
    root.mkdir()
    a = root / "a.py"
    a.write_text("original\n")
    host = DiskHost()
    folder = store_path(tmp_path / "checkpoints", root)
    gone = Checkpoints(session_id="gone", store=ShadowStore(path=folder, root=root), host=host)
    kept = Checkpoints(session_id="kept", store=ShadowStore(path=folder, root=root), host=host)
    await gone.start_turn(message_id="m1", prompt="gone's prompt")
    g = root / "g.py"
    change = FileChange(path=g, base=None, new_text="ONLY_GONE\n")
    await gone.before_apply([change])
    assert (await host.apply_changes([change], label="Write")).applied
    await gone.after_apply([g])
    gone.end_turn()
    g.unlink()
    [record] = gone.list()[0].files.values()
    assert record.after is not None
    await kept.start_turn(message_id="m2", prompt="kept's prompt")
    await kept.before_shell()
    a.write_text("kept's version\n")
    await kept.after_shell()
    kept.end_turn()
    return root, gone, kept, record.after


async def test_old_checkpoints_of_a_session_without_transcript_are_collected(
    tmp_path: Path,
) -> None:
    root, gone, kept, only_gone = await _two_sessions(tmp_path)
    size_before = kept.store.disk_bytes()

    # Not old yet: nothing goes.
    assert collect(tmp_path / "checkpoints", saved={"kept"}, days=30).refs == 0
    done = collect(tmp_path / "checkpoints", saved={"kept"}, days=30, now=LATER, grace_s=0)

    assert done.sessions == ("gone",) and done.refs == 1 and done.objects >= 2
    assert kept.store.disk_bytes() <= size_before - done.bytes
    assert gone.list() == []
    with pytest.raises(KeyError):
        kept.store.get(only_gone)
    # The saved session still rewinds: its blobs and the stat cache's survived.
    host = DiskHost()
    chosen = checkpoints_from(kept.list(), "m2")
    targets, conflicts = plan_rewind(chosen, host=host, blobs=kept.store.get)
    await apply_rewind(targets, conflicts, host=host)
    assert (root / "a.py").read_text() == "original\n"
    kept.store.snapshot()  # the index names no missing blob


async def test_recent_objects_and_saved_sessions_are_kept(tmp_path: Path) -> None:
    _, gone, kept, only_gone = await _two_sessions(tmp_path)

    done = collect(tmp_path / "checkpoints", saved={"kept", "gone"}, days=30, now=LATER)
    assert done.refs == 0 and len(gone.list()) == 1
    # Without a transcript the references go, but objects younger than the grace period stay
    # (another process may be writing a checkpoint that needs them).
    done = collect(tmp_path / "checkpoints", saved={"kept"}, days=30, now=LATER, grace_s=50 * DAY_S)
    assert done.refs == 1 and done.objects == 0
    assert kept.store.get(only_gone) == b"ONLY_GONE\n"
    assert collect(tmp_path / "checkpoints", saved=(), days=0, now=LATER).refs == 0
