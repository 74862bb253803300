"""The shadow store: a bare git repository of our own per project folder (pygit2/libgit2).

It lives under ``<data folder>/checkpoints/<folder name>-<hash>`` and reads the project folder
as its work tree, so the project's ``.git`` is never opened, changed or needed (libgit2 skips
``.git`` entries), and nothing here ever deletes untracked files (no ``git clean``, no
checkout). Snapshots are incremental: the store's own index keeps each file's stat signature
(size, mtime, ctime, inode; libgit2 compares ctime as git does with
``core.trustctime``), so only files whose signature changed are read and hashed; ignored files
(``.gitignore`` files in the folder) and files larger than :data:`MAX_FILE_BYTES` are left
out. Contents are content-addressed, so unchanged files cost nothing per checkpoint.

Why the signature cannot hide a change: every write moves the ctime, which no program can set
back, so the only blind spot is a second write of the same size within one tick of the clock
that stamps files (Linux's coarse clock: a few milliseconds) after the signature was taken.
libgit2 closes it with git's "racy git" rule: an entry whose mtime is not older than the index
itself is not trusted and its file is hashed again.

A checkpoint is a commit whose tree holds ``manifest.json`` (a :class:`~.records.Checkpoint`),
``tree`` (the folder's tree before the turn's first change) and ``blobs/`` (every other
content the manifest names, so that all of it stays reachable); it is referenced by
``refs/lsp-agent/<session id>/<seq>-<message id>``. Its later states within the prompt's turn
are lines of the session's pending file (:meth:`ShadowStore.save_pending`), read over the
commit until :meth:`ShadowStore.fold` makes them commits.

All methods block (disk I/O); callers run them in a worker thread, one at a time per store
(:attr:`ShadowStore.lock`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
import threading
import time
import zlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.checkpoints.records import Checkpoint

if TYPE_CHECKING:
    import pygit2

MAX_FILE_BYTES = 2 * 1024 * 1024
"""Files larger than this (bytes) are not snapshotted (opencode's cap: 2 MiB)."""

REF_PREFIX = "refs/lsp-agent/"
_SIGNATURE = ("lsp-agent", "lsp-agent@localhost")
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True, kw_only=True)
class TreeChange:
    """A file that differs between two snapshots: ``path`` relative to the folder, blob ids
    before and after (``None``: absent)."""

    path: str
    before: str | None
    after: str | None


def store_path(folder: Path, root: Path) -> Path:
    """Where the shadow store of project folder ``root`` lives under ``folder`` (the data
    folder's ``checkpoints``): the project folder's name (made safe) and the first 16 hex
    digits of the SHA-256 of its absolute path."""
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = _SAFE.sub("_", root.name)[:40] or "root"
    return folder / f"{name}-{digest}"


class ShadowStore:
    """The shadow repository of one project folder. Raises ``pygit2.GitError`` or ``OSError``
    when the store cannot be created or read."""

    def __init__(self, *, path: Path, root: Path, max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.path = path
        self.root = root
        self.max_file_bytes = max_file_bytes
        self.lock = threading.Lock()
        # libgit2 loads with the first store (a session), not with the server.
        import pygit2

        # Strict creation reads back every object a new tree or commit names, to check it
        # exists: a save would re-read each blob of its checkpoint (dozens of files after a
        # turn of edits). Stores only name objects they have just written or read. (A
        # libgit2 setting of the whole process; nothing else here creates git objects.)
        pygit2.settings.enable_strict_object_creation(False)
        if (path / "HEAD").exists():
            self.repo = pygit2.Repository(str(path))
        else:
            path.mkdir(parents=True, exist_ok=True)
            self.repo = pygit2.init_repository(str(path), bare=True)
        # The work tree is set for this handle only; the store's config never names it.
        self.repo.workdir = str(root)

    def snapshot(self) -> str:
        """The folder's tree now (blob ids of every file not ignored and within the size cap),
        as a tree id. Only files whose stat signature changed since the last snapshot are
        read. Files that vanish or cannot be read while it runs are left out."""
        from pygit2 import GitError
        from pygit2.enums import DiffOption

        index = self.repo.index
        # UPDATE_INDEX refreshes the stat cache of files found unchanged after hashing: an
        # entry written in the same second as its file ("racily clean", which git smudges)
        # would otherwise be re-read and hashed on every later snapshot.
        flags = (
            DiffOption.INCLUDE_UNTRACKED
            | DiffOption.RECURSE_UNTRACKED_DIRS
            | DiffOption.UPDATE_INDEX
        )
        for delta in index.diff_to_workdir(flags).deltas:
            path = delta.new_file.path
            try:
                if delta.status_char() == "D":
                    index.remove(path)
                elif delta.new_file.size <= self.max_file_bytes:
                    index.add(path)
                elif path in index:
                    index.remove(path)  # grew past the cap: no longer snapshotted
            except (GitError, OSError, KeyError):
                # Vanished or unreadable mid-scan, or a nested repository: not snapshotted.
                continue
        tree = index.write_tree()
        return str(tree)

    def snapshot_paths(self, paths: Iterable[Path]) -> str:
        """The folder's tree with only ``paths`` (absolute; the files an edit is about to
        change) read now, as a tree id: every other file keeps the state the last
        :meth:`snapshot` found, so no directory is walked (a few milliseconds whatever the
        folder's size). A path outside the folder is left out; one that is missing, ignored,
        not a regular file or symbolic link, or over the size cap leaves the tree."""
        from pygit2 import GitError

        index = self.repo.index
        for path in paths:
            try:
                rel = path.relative_to(self.root).as_posix()
            except ValueError:
                continue
            try:
                info = os.lstat(path)
                keep = (
                    (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode))
                    and info.st_size <= self.max_file_bytes
                    and not self.repo.path_is_ignored(rel)
                )
                if keep:
                    index.add(rel)
                elif rel in index:
                    index.remove(rel)
            except FileNotFoundError:
                if rel in index:
                    index.remove(rel)
            except (GitError, OSError, KeyError):
                continue  # unreadable, or inside a nested repository: not snapshotted
        return str(index.write_tree())

    def save_index(self) -> None:
        """Persist the stat cache, so the next process's first snapshot is incremental too."""
        self.repo.index.write()

    def changes(self, before: str, after: str) -> list[TreeChange]:
        """Files that differ between trees ``before`` and ``after`` (renames are a deletion
        plus an addition)."""
        from pygit2 import Tree

        old_tree = self.repo[before].peel(Tree)
        diff = old_tree.diff_to_tree(self.repo[after].peel(Tree))
        out: list[TreeChange] = []
        for delta in diff.deltas:
            status = delta.status_char()
            old = None if status == "A" else str(delta.old_file.id)
            new = None if status == "D" else str(delta.new_file.id)
            out.append(
                TreeChange(path=delta.new_file.path or delta.old_file.path, before=old, after=new)
            )
        return out

    def tree_blob(self, tree: str, relpath: str) -> str | None:
        """The blob id of ``relpath`` in ``tree`` (``None``: not there)."""
        from pygit2 import Tree

        try:
            entry = self.repo[tree].peel(Tree)[relpath]
        except KeyError:
            return None
        return str(entry.id)

    def put(self, data: bytes) -> str:
        """Store ``data``; its blob id."""
        import pygit2

        # Most contents are in the store already (a file's text before an edit): libgit2
        # would create and delete a temporary file to find that out. Its loose object's time
        # is refreshed instead, as libgit2 does, so that a collection running meanwhile in
        # another process sees it as new (retention keeps objects younger than an hour).
        blob = str(pygit2.hash(data))
        try:
            os.utime(self.path / "objects" / blob[:2] / blob[2:])
        except FileNotFoundError:
            try:
                self._write_loose(blob, data)
            except OSError:
                return str(self.repo.create_blob(data))  # libgit2 says what is wrong
        except OSError:
            return str(self.repo.create_blob(data))  # packed, or not ours to touch
        return blob

    def _write_loose(self, blob: str, data: bytes) -> None:
        """Write ``data`` as the loose object ``blob`` (its id), as git and libgit2 do: the
        zlib-compressed ``blob <size>\\0`` header and content, read-only, in a temporary file
        of ``objects/`` renamed to ``objects/xx/yyyy…``, so a reader sees the whole object
        or none. Why not ``create_blob``: libgit2 also looks the object up again, rescans the
        packs when it is missing and creates its file with a link and an unlink: 16 system
        calls for a new content in a new fan-out folder, 4 of them changes to folders,
        against 6 and 3 here (4 and 2 when the folder exists). After ``pytest`` has run,
        a folder change waits on the file system's journal. Another process storing the
        same object at once renames the same bytes over it. Raises ``OSError``; leaves no
        temporary file."""
        objects = self.path / "objects"
        packed = zlib.compress(b"blob %d\x00" % len(data) + data, 1)
        tmp = objects / f"tmp_object_lsp_agent_{secrets.token_hex(8)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o444)
        try:
            try:
                _write_all(fd, packed)
            finally:
                os.close(fd)
            final = objects / blob[:2] / blob[2:]
            try:
                os.rename(tmp, final)
            except FileNotFoundError:
                (objects / blob[:2]).mkdir(exist_ok=True)
                os.rename(tmp, final)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def get(self, blob: str) -> bytes:
        """The content of blob ``blob``. Raises ``KeyError`` when the store lacks it."""
        from pygit2 import Blob

        obj = self.repo[blob]
        return obj.peel(Blob).data

    def save(self, checkpoint: Checkpoint) -> None:
        """Write ``checkpoint`` as a commit and point its reference at it (replacing an
        earlier state of the same checkpoint)."""
        name = checkpoint_ref(checkpoint.session_id, checkpoint.seq, checkpoint.message_id)
        self.repo.references.create(name, self._commit(checkpoint), force=True)

    def _commit(self, checkpoint: Checkpoint) -> pygit2.Oid:
        import pygit2
        from pygit2.enums import FileMode

        repo = self.repo
        manifest = repo.create_blob(checkpoint.model_dump_json().encode("utf-8"))
        blobs = repo.TreeBuilder()
        for record in checkpoint.files.values():
            for blob in (record.before, record.after):
                if blob is not None:
                    blobs.insert(blob, pygit2.Oid(hex=blob), FileMode.BLOB)
        top = repo.TreeBuilder()
        top.insert("manifest.json", manifest, FileMode.BLOB)
        top.insert("blobs", blobs.write(), FileMode.TREE)
        if checkpoint.tree is not None:
            top.insert("tree", pygit2.Oid(hex=checkpoint.tree), FileMode.TREE)
        when = int(checkpoint.created)
        author = pygit2.Signature(*_SIGNATURE, when, 0)
        message = f"checkpoint {checkpoint.message_id}\n\n{checkpoint.prompt}\n"
        return repo.create_commit(None, author, author, message, top.write(), [])

    def save_pending(self, checkpoint: Checkpoint) -> int:
        """Record a new state of ``checkpoint`` (one already saved with :meth:`save`) by
        appending it as one line to its session's pending file: one ``write``, where a
        commit is five new objects and a reference. :meth:`load` reads a checkpoint's last
        pending state over its commit; :meth:`fold` makes the pending states commits. The
        line is on disk as soon as a commit's objects would be (neither is ``fsync``-ed): a
        crash of the process loses neither. Returns the pending file's size (bytes) after
        the line.

        The line starts with a newline too: one cut short (a full disk, a crash) then ends
        where the next one begins, instead of swallowing it (:meth:`pending` skips both the
        cut line and the empty ones)."""
        line = b"\n" + checkpoint.model_dump_json().encode("utf-8") + b"\n"
        path = pending_path(self.path, checkpoint.session_id)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, flags, 0o644)
        try:
            _write_all(fd, line)
            return os.lseek(fd, 0, os.SEEK_CUR)  # appending: the end of the file
        finally:
            os.close(fd)

    def pending(self, session_id: str) -> dict[int, Checkpoint]:
        """The last pending state of each checkpoint of ``session_id`` (by ``seq``): complete
        lines only (a line torn by a crash is skipped, the one before it stands)."""
        try:
            data = pending_path(self.path, session_id).read_bytes()
        except FileNotFoundError:
            return {}
        out: dict[int, Checkpoint] = {}
        for line in data.split(b"\n")[:-1]:
            if not line:
                continue
            try:
                checkpoint = Checkpoint.model_validate_json(line)
            except ValueError:
                continue
            out[checkpoint.seq] = checkpoint
        return out

    def fold(self, session_id: str) -> None:
        """Save the pending states of ``session_id`` as commits (:meth:`save`) and remove its
        pending file. Only the process that writes the session's checkpoints calls this."""
        for checkpoint in self.pending(session_id).values():
            self.save(checkpoint)
        with contextlib.suppress(FileNotFoundError):
            pending_path(self.path, session_id).unlink()

    def load(self, session_id: str) -> list[Checkpoint]:
        """The checkpoints of ``session_id``, oldest first: each one's commit, or its last
        pending state when it has one. Unreadable ones are skipped."""
        from pygit2 import Blob, Commit, GitError

        prefix = f"{REF_PREFIX}{_SAFE.sub('_', session_id)}/"
        found: dict[int, Checkpoint] = {}
        for name in self.repo.references:
            if not name.startswith(prefix):
                continue
            try:
                commit = self.repo.references[name].peel(Commit)
                data = commit.tree["manifest.json"].peel(Blob).data
                checkpoint = Checkpoint.model_validate_json(data)
            except (KeyError, ValueError, GitError):
                continue
            found[checkpoint.seq] = checkpoint
        found.update(self.pending(session_id))
        return sorted(found.values(), key=lambda c: c.seq)

    def copy_checkpoints(self, source: str, target: str, message_ids: Collection[str]) -> int:
        """Give session ``target`` the checkpoints of session ``source`` whose prompts are
        among ``message_ids`` (a fork's copied prompts): new references to the same commits,
        so nothing is copied but the names (a checkpoint with a pending state gets a commit
        of that state). Returns how many."""
        prefix = f"{REF_PREFIX}{safe_name(source)}/"
        wanted = {safe_name(m) for m in message_ids}
        pending = {
            checkpoint_ref(source, c.seq, c.message_id): c for c in self.pending(source).values()
        }
        count = 0
        for name in list(self.repo.references):
            rest = name[len(prefix) :] if name.startswith(prefix) else None
            if rest is None or rest.partition("-")[2] not in wanted:
                continue
            target_ref = f"{REF_PREFIX}{safe_name(target)}/{rest}"
            state = pending.get(name)
            commit = self._commit(state) if state else self.repo.references[name].target
            self.repo.references.create(target_ref, commit, force=True)
            count += 1
        return count

    def disk_bytes(self) -> int:
        """Bytes the store uses on disk (objects, index, references)."""
        return sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())


def pending_path(store: Path, session_id: str) -> Path:
    """The pending file of ``session_id`` in the store at ``store`` (see
    :meth:`ShadowStore.save_pending`)."""
    return store / "pending" / f"{safe_name(session_id)}.lines"


def safe_name(text: str) -> str:
    """``text`` as it appears in a reference name (characters other than letters, digits,
    ``.``, ``_`` and ``-`` become ``_``)."""
    return _SAFE.sub("_", text)


def checkpoint_ref(session_id: str, seq: int, message_id: str) -> str:
    """The reference name of a checkpoint."""
    return f"{REF_PREFIX}{_SAFE.sub('_', session_id)}/{seq:08d}-{_SAFE.sub('_', message_id)}"


def now() -> float:
    """The current Unix time (seconds)."""
    return time.time()


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may take part of it). Raises ``OSError``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
