"""Checkpoints in a real shadow git store and rewind through a real host (the disk, with
simulated editor buffers): Edit/Write, shell edits/deletions/new files, unsaved buffers, user
edits since the checkpoint."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pygit2
import pytest

from lsp_agent.checkpoints.objects import ShadowStore, store_path
from lsp_agent.checkpoints.recorder import Checkpoints
from lsp_agent.checkpoints.rewind import (
    Resolution,
    apply_rewind,
    checkpoints_from,
    plan_rewind,
)
from lsp_agent.protocol.documents import FileChange, TextSnapshot
from lsp_agent.protocol.permissions import PermissionResponse
from lsp_agent.sessions.rewind_review import chosen, review_diff
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.textfile import read_text_file


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")
    (root / "src" / "b.py").write_text("print('b')\n")
    (root / "notes.txt").write_text("keep me\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"\0obj")
    # The user's own repository: must never be touched.
    repo = pygit2.init_repository(str(root))
    repo.index.add_all()
    repo.index.write()
    return root


def _recorder(tmp_path: Path, root: Path, host: DiskHost) -> Checkpoints:
    store = ShadowStore(path=store_path(tmp_path / "data" / "checkpoints", root), root=root)
    return Checkpoints(session_id="s1", store=store, host=host)


async def _edit(cp: Checkpoints, host: DiskHost, path: Path, new_text: str) -> None:
    base = host.buffer(path) or (read_text_file(path) if path.exists() else None)
    change = FileChange(path=path, base=base, new_text=new_text)
    await cp.before_apply([change])
    result = await host.apply_changes([change], label="Edit")
    assert result.applied, result.failure
    # As the workspace does: the door's snapshots stand for the files it wrote.
    await cp.after_apply([path], result.snapshots)


async def _shell(cp: Checkpoints, action: object) -> None:
    await cp.before_shell()
    assert callable(action)
    action()
    await cp.after_shell()


async def _rewind(cp: Checkpoints, host: DiskHost, message_id: str):  # type: ignore[no-untyped-def]
    chosen = checkpoints_from(cp.list(), message_id)
    targets, conflicts = plan_rewind(chosen, host=host, blobs=cp.store.get)
    return await apply_rewind(targets, conflicts, host=host)


def _git_dir_state(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in (root / ".git").rglob("*") if p.is_file()
    }


async def test_rewind_after_edit_write_and_shell_rm_mv_new(tmp_path: Path, project: Path) -> None:
    host = DiskHost()
    cp = _recorder(tmp_path, project, host)
    user_git = _git_dir_state(project)
    a, b, notes = project / "src" / "a.py", project / "src" / "b.py", project / "notes.txt"
    originals = {p: p.read_bytes() for p in (a, b, notes)}

    await cp.start_turn(message_id="m1", prompt="refactor\nmore")
    await _edit(cp, host, a, "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n")
    await _edit(cp, host, project / "src" / "new.py", "created = True\n")

    def shell() -> None:
        notes.unlink()
        shutil.move(b, project / "src" / "moved.py")
        (project / "gen").mkdir()
        (project / "gen" / "out.txt").write_text("generated\n")
        (project / "build" / "more.o").write_bytes(b"ignored")

    await _shell(cp, shell)
    [checkpoint] = cp.list()
    assert checkpoint.prompt == "refactor"
    assert set(checkpoint.files) == {
        str(a),
        str(project / "src" / "new.py"),
        str(notes),
        str(b),
        str(project / "src" / "moved.py"),
        str(project / "gen" / "out.txt"),
    }

    outcome = await _rewind(cp, host, "m1")
    assert outcome.failure is None and not outcome.conflicts
    for path, data in originals.items():
        assert path.read_bytes() == data
    assert not (project / "src" / "new.py").exists()
    assert not (project / "src" / "moved.py").exists()
    assert not (project / "gen" / "out.txt").exists()
    # Ignored files are not the checkpoint's business: never removed.
    assert (project / "build" / "more.o").read_bytes() == b"ignored"
    assert _git_dir_state(project) == user_git
    assert not (tmp_path / "data" / "checkpoints").joinpath(".git").exists()


async def test_user_edits_since_the_checkpoint_are_kept_or_conflict(
    tmp_path: Path, project: Path
) -> None:
    host = DiskHost()
    cp = _recorder(tmp_path, project, host)
    a = project / "src" / "a.py"
    await cp.start_turn(message_id="m1", prompt="change a")
    await _edit(cp, host, a, "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n")
    # The user then edits a far-away line and the same line as the agent.
    a.write_text("a = 10\nb = 2\nc = 33\nd = 4\ne = 500\n")

    outcome = await _rewind(cp, host, "m1")
    text = a.read_text()
    assert text.startswith("a = 1\nb = 2\nc = 33\n")  # agent's change undone, user's kept
    assert "<<<<<<< yours" in text and "e = 500\n" in text and "e = 5\n" in text
    [conflict] = outcome.conflicts
    assert conflict.path == a and conflict.regions == 1
    # The notice names exactly where the markers are in the file as written.
    lines = text.splitlines()
    first = lines.index("<<<<<<< yours (changed since the checkpoint)") + 1
    last = lines.index(">>>>>>> checkpoint") + 1
    assert conflict.reason.startswith(f"conflict markers at lines {first}-{last}: ")


@pytest.mark.parametrize(
    ("how", "line"), [("checkpoint", "e = 5\n"), ("mine", "e = 500\n"), ("markers", None)]
)
async def test_overlapping_regions_resolve_to_the_side_chosen(
    tmp_path: Path, project: Path, how: Resolution, line: str | None
) -> None:
    host = DiskHost()
    cp = _recorder(tmp_path, project, host)
    a = project / "src" / "a.py"
    await cp.start_turn(message_id="m1", prompt="change a")
    await _edit(cp, host, a, "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n")
    a.write_text("a = 10\nb = 2\nc = 33\nd = 4\ne = 500\n")
    chosen = checkpoints_from(cp.list(), "m1")

    targets, conflicts = plan_rewind(chosen, host=host, blobs=cp.store.get, resolve={a: how})

    text = (targets[a] or b"").decode()
    if line is None:
        assert "<<<<<<< yours" in text and [c.path for c in conflicts] == [a]
    else:
        assert text == f"a = 1\nb = 2\nc = 33\nd = 4\n{line}" and not conflicts


def test_the_review_shows_only_the_overlapping_hunks_and_fails_safe() -> None:
    now = "a = 10\nc = 33\ne = 500\n"
    mine = "a = 1\nc = 33\ne = 500\n"
    theirs = "a = 1\nc = 33\ne = 5\n"
    assert review_diff(now, mine, theirs) == "a = 10\nc = 33\ne = 5\n"
    answers = [
        (PermissionResponse(outcome="selected", option_id="checkpoint"), "checkpoint"),
        (PermissionResponse(outcome="selected", option_id="mine"), "mine"),
        (PermissionResponse(outcome="selected", option_id="markers"), "markers"),
        (PermissionResponse(outcome="selected", option_id="allow_once"), "markers"),
        (PermissionResponse(outcome="cancelled"), "markers"),
    ]
    for answer, expected in answers:
        assert chosen(answer) == expected


async def test_unsaved_buffers_are_checkpointed_with_their_text(
    tmp_path: Path, project: Path
) -> None:
    a = project / "src" / "a.py"
    unsaved = TextSnapshot(path=a, text="typed but unsaved\n", version=7, source="buffer")
    host = DiskHost(buffers={a: unsaved})
    cp = _recorder(tmp_path, project, host)
    await cp.start_turn(message_id="m1", prompt="edit the open file")
    await _edit(cp, host, a, "agent text\n")
    [checkpoint] = cp.list()
    record = checkpoint.files[str(a)]
    assert record.before_version == 7 and record.after_version == 8
    assert cp.store.get(record.before or "") == b"typed but unsaved\n"

    outcome = await _rewind(cp, host, "m1")
    assert outcome.restored == (a,)
    buffer = host.buffer(a)
    assert buffer is not None
    assert buffer.text == "typed but unsaved\n"  # back in the editor, through the door
    assert buffer.version == 9
    assert a.read_text() == "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"  # the disk never changed


async def test_rewind_to_an_earlier_prompt_undoes_later_turns_too(
    tmp_path: Path, project: Path
) -> None:
    host = DiskHost()
    cp = _recorder(tmp_path, project, host)
    a = project / "src" / "a.py"
    await cp.start_turn(message_id="m1", prompt="one")
    await _edit(cp, host, a, "one\n")
    await cp.start_turn(message_id="m2", prompt="nothing changed here")
    await cp.start_turn(message_id="m3", prompt="three")
    await _shell(cp, lambda: a.write_text("three\n"))
    assert [c.message_id for c in cp.list()] == ["m1", "m2", "m3"]

    outcome = await _rewind(cp, host, "m3")
    assert a.read_text() == "one\n" and outcome.restored == (a,)
    await _rewind(cp, host, "m2")  # nothing to undo: idempotent
    assert a.read_text() == "one\n"
    await _rewind(cp, host, "m1")
    assert a.read_text() == "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
    with pytest.raises(KeyError):
        checkpoints_from(cp.list(), "nope")


async def test_checkpoints_survive_a_new_process_and_skip_big_files(
    tmp_path: Path, project: Path
) -> None:
    host = DiskHost()
    big = project / "big.bin"
    big.write_bytes(b"x" * 2048)
    store = ShadowStore(
        path=store_path(tmp_path / "data" / "checkpoints", project),
        root=project,
        max_file_bytes=1024,
    )
    cp = Checkpoints(session_id="s1", store=store, host=host)
    await cp.start_turn(message_id="m1", prompt="rm")
    await _shell(cp, big.unlink)
    await _shell(cp, (project / "src" / "b.py").unlink)
    again = Checkpoints(
        session_id="s1",
        store=ShadowStore(
            path=store_path(tmp_path / "data" / "checkpoints", project), root=project
        ),
        host=host,
    )
    [checkpoint] = again.list()
    assert set(checkpoint.files) == {str(project / "src" / "b.py")}  # the big file was skipped
    await _rewind(again, host, "m1")
    assert (project / "src" / "b.py").read_text() == "print('b')\n"
    await again.start_turn(message_id="m2", prompt="next")
    assert [c.seq for c in again.list()] == [1, 2]


async def test_a_small_edit_never_waits_for_a_busy_store_in_the_event_loop(
    tmp_path: Path, project: Path
) -> None:
    host = DiskHost()
    cp = _recorder(tmp_path, project, host)
    a = project / "src" / "a.py"
    await cp.start_turn(message_id="m1", prompt="edit")
    change = FileChange(path=a, base=read_text_file(a), new_text="a = 10\n")
    await cp.before_apply([change])
    assert (await host.apply_changes([change], label="Edit")).applied

    # Another session's snapshot holds the store (here: this thread, so waiting for it in
    # the loop's thread would never end): the edit's record waits in a worker thread and
    # the loop goes on.
    cp.store.lock.acquire()
    try:
        pending = asyncio.ensure_future(cp.after_apply([a]))
        await asyncio.sleep(0.05)
        assert not pending.done()
    finally:
        cp.store.lock.release()
    await asyncio.wait_for(pending, timeout=60)

    [checkpoint] = cp.list()
    assert cp.store.get(checkpoint.files[str(a)].after or "") == b"a = 10\n"


async def test_the_content_after_an_edit_is_the_bytes_on_disk(
    project: Path, tmp_path: Path
) -> None:
    # The recorder takes a written file's content from the door's snapshot, not from a read:
    # it must be the file's bytes, also when they read back in another codec (an escaped
    # byte that is not UTF-8 makes the file latin-1), and a rewind must give back the old.
    host = DiskHost()
    cp = _recorder(tmp_path, project, host)
    path = project / "src" / "b.py"
    await cp.start_turn(message_id="m1", prompt="edit")
    await _edit(cp, host, path, "print('b')\n# caf\udce9\n")
    record = cp.list()[-1].files[str(path)]
    assert record.after is not None
    assert cp.store.get(record.after) == path.read_bytes() == b"print('b')\n# caf\xe9\n"
    cp.end_turn()
    result = await _rewind(cp, host, "m1")
    assert result.failure is None
    assert path.read_bytes() == b"print('b')\n"
