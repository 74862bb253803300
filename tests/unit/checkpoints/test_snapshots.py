"""Snapshots of the shadow store on a real libgit2 object store: the stat cache must never hide
a change (git's racy rule), and an edit's snapshot reads only the files it names."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pygit2

from lsp_agent.checkpoints.objects import ShadowStore, store_path


def _store(tmp_path: Path, root: Path, **kw: int) -> ShadowStore:
    return ShadowStore(path=store_path(tmp_path / "data", root), root=root, **kw)


def _rewrite_same_stat(path: Path, data: bytes, mtime_ns: int) -> None:
    """Change the content in place (same inode, same size) and give it ``mtime_ns`` back: only
    the ctime, which no program can set, still tells the change."""
    with path.open("r+b") as file:
        file.write(data)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_a_same_size_change_within_the_clock_tick_is_found(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    target = root / "a.txt"
    target.write_bytes(b"value = 1\n")
    # Stamped no earlier than the index will be: the entry is "racily clean" (git's rule
    # hashes it again whatever its stat says).
    tick = time.time_ns() + 60 * 10**9
    os.utime(target, ns=(tick, tick))
    store = _store(tmp_path, root)
    first = store.snapshot()
    store.save_index()
    before = os.stat(target)
    _rewrite_same_stat(target, b"value = 2\n", tick)
    after = os.stat(target)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    second = store.snapshot()
    assert second != first
    assert store.get(store.tree_blob(second, "a.txt") or "") == b"value = 2\n"
    # And by a new process reading the saved stat cache.
    store.save_index()
    _rewrite_same_stat(target, b"value = 3\n", tick)
    again = _store(tmp_path, root)
    third = again.snapshot()
    assert again.get(again.tree_blob(third, "a.txt") or "") == b"value = 3\n"


def test_back_to_back_writes_of_the_same_size_are_all_found(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    target = root / "n.txt"
    store = _store(tmp_path, root)
    for i in range(20):
        # Written, snapshotted and written again within a few milliseconds: often within one
        # tick of the coarse clock that stamps files, so size and mtime stay the same.
        target.write_bytes(f"n = {i:04d}\n".encode())
        tree = store.snapshot()
        assert store.get(store.tree_blob(tree, "n.txt") or "") == f"n = {i:04d}\n".encode()


def test_an_edit_snapshot_reads_only_the_files_it_names(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / ".gitignore").write_text("build/\n")
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "src" / "b.py").write_text("b = 1\n")
    store = _store(tmp_path, root, max_file_bytes=64)
    full = store.snapshot()
    (root / "src" / "a.py").write_text("a = 2\n")
    (root / "src" / "b.py").write_text("b = 2\n")  # not named: keeps the last scan's state
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("ignored\n")
    (root / "big.txt").write_text("x" * 100)
    outside = tmp_path / "elsewhere.py"
    outside.write_text("o = 1\n")
    tree = store.snapshot_paths(
        [
            root / "src" / "a.py",
            root / "build" / "out.o",
            root / "big.txt",
            root / "new.py",  # not there yet (a Write that creates it)
            outside,
        ]
    )
    assert tree != full
    assert store.get(store.tree_blob(tree, "src/a.py") or "") == b"a = 2\n"
    assert store.get(store.tree_blob(tree, "src/b.py") or "") == b"b = 1\n"
    for absent in ("build/out.o", "big.txt", "new.py", "elsewhere.py"):
        assert store.tree_blob(tree, absent) is None
    # A later full scan sees everything again.
    rescanned = store.snapshot()
    assert store.get(store.tree_blob(rescanned, "src/b.py") or "") == b"b = 2\n"
    (root / "src" / "a.py").unlink()
    gone = store.snapshot_paths([root / "src" / "a.py"])
    assert store.tree_blob(gone, "src/a.py") is None


def test_a_new_content_is_a_loose_object_git_reads_and_no_temporary_file_stays(
    tmp_path: Path,
) -> None:
    # The store writes new objects itself (not through libgit2): git's own format, read-only,
    # nothing left in objects/ but the fan-out folders; a content already stored is kept.
    root = tmp_path / "proj"
    root.mkdir()
    store = ShadowStore(path=tmp_path / "store", root=root)
    contents = [b"", b"x = 1\n", bytes(range(256)) * 1000]
    for data in contents:
        blob = store.put(data)
        assert blob == str(pygit2.hash(data))
        assert pygit2.Repository(str(tmp_path / "store"))[blob].peel(pygit2.Blob).data == data
        loose = tmp_path / "store" / "objects" / blob[:2] / blob[2:]
        assert stat.S_IMODE(loose.stat().st_mode) == 0o444
        assert store.put(data) == blob
    names = {p.name for p in (tmp_path / "store" / "objects").iterdir()}
    assert names - {"info", "pack"} == {str(pygit2.hash(d))[:2] for d in contents}
