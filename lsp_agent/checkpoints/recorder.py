"""Recording what each prompt's turn changes, at the edge where tools run.

The session's workspace calls :meth:`Checkpoints.before_apply`/:meth:`Checkpoints.after_apply`
around every edit it applies (Edit, Write, Rename, ...), and the executor calls
:meth:`Checkpoints.before_shell`/:meth:`Checkpoints.after_shell` around every tool that may
write anywhere on disk (Bash, MCP tools). The first such call of a turn records the folder's
tree (the state before the prompt's first change): an edit refreshes only the files it names
(:meth:`~.objects.ShadowStore.snapshot_paths`, no walk), a shell command's snapshot walks the
folder comparing stat signatures; every file an ``Edit``/``Write`` touches keeps
the content it had before its first change in the turn, taken from the change's base, so an
editor buffer's unsaved text (and its version) is what is kept, not the older disk file; a
shell command (a tool that writes the disk, such as ``Bash``) is bracketed by two snapshots
and the files that differ between them (edited, created, deleted, moved) join the turn's
files. The checkpoint is saved after every tool, so a crash loses at most the running one:
at the prompt's start as a commit, after each tool as one line appended to the session's
pending file (:meth:`~.objects.ShadowStore.save_pending`; a commit is five new objects and a
reference, which cost more than the edit itself), folded into the commit when the next prompt
starts.

Snapshots run in a worker thread. A failure never stops the tool: it is logged and the
checkpoint is marked incomplete. An edit of small files (up to :data:`INLINE_BYTES` of text in
all) is recorded in the calling thread instead when the store is free at once: the work is a
few small objects, and each hand-off to a thread and back costs a wake-up of both, which
on a busy machine means waiting for a core.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.checkpoints.objects import ShadowStore, now
from lsp_agent.checkpoints.records import Checkpoint, FileRecord
from lsp_agent.protocol.documents import FileChange, TextSnapshot
from lsp_agent.protocol.host import Host
from lsp_agent.workspace.textfile import encode_text

log = logging.getLogger(__name__)

PENDING_FOLD_BYTES = 256 * 1024
"""When the session's pending file grows past this many bytes within a turn, its states are
folded into the commit at once (see :meth:`~.objects.ShadowStore.save_pending`)."""

INLINE_BYTES = 256 * 1024
"""An edit whose texts (before and after, all files) hold at most this many characters is
recorded without a worker thread (see the module docstring)."""


@dataclass(frozen=True, kw_only=True)
class Content:
    """A file's content as stored: blob id (``None``: absent) and the editor's version when
    it came from an open buffer."""

    blob: str | None
    version: int | None = None


def current_bytes(
    host: Host, path: Path, *, written: TextSnapshot | None = None
) -> tuple[bytes | None, int | None]:
    """What the user sees of ``path`` now: the open buffer's text encoded as its file would be
    saved (with its version; UTF-8 when that encoding cannot hold the text), else the file's
    bytes, else ``(None, None)`` when it does not exist or is not a regular file.
    ``written`` is the disk snapshot of a write that just happened to ``path``: its bytes are
    encoded from it (decoding and encoding give back the same bytes) instead of read."""
    buffered = host.buffer(path)
    if buffered is not None:
        try:
            data = encode_text(buffered.text, encoding=buffered.encoding, bom=buffered.bom)
        except UnicodeEncodeError:
            # The buffer holds text its file's encoding cannot (the save will fail and say
            # so); a checkpoint must never fail the edit, so it keeps the text as UTF-8.
            data = buffered.text.encode("utf-8", "surrogatepass")
        return data, buffered.version
    if written is not None:
        return encode_text(written.text, encoding=written.encoding, bom=written.bom), None
    try:
        return (path.read_bytes(), None) if path.is_file() else (None, None)
    except OSError:
        return None, None


@dataclass(kw_only=True)
class _Turn:
    message_id: str
    prompt: str
    seq: int
    created: float
    tree: str | None = None
    files: dict[str, FileRecord] = field(default_factory=dict)
    complete: bool = True
    shell_before: str | None = None


class Checkpoints:
    """The checkpoints of one session in the shadow store of its folder ``store.root``.

    ``start_turn`` begins the checkpoint of a prompt and ``end_turn`` ends it; changes are
    reported through ``before_apply``/``after_apply`` and ``before_shell``/``after_shell``
    (the workspace's :class:`~lsp_agent.workspace.workspace.ChangeObserver`); :meth:`list`
    returns the saved checkpoints, oldest first.
    """

    def __init__(
        self,
        *,
        session_id: str,
        store: ShadowStore,
        host: Host,
        pending_fold_bytes: int = PENDING_FOLD_BYTES,
    ) -> None:
        self.session_id = session_id
        self.store = store
        self.host = host
        self.pending_fold_bytes = pending_fold_bytes
        self._turn: _Turn | None = None
        self._seq = 0

    async def start_turn(self, *, message_id: str, prompt: str) -> None:
        """Begin the checkpoint of the prompt ``message_id`` (its text ``prompt``) and save it
        empty (a reference and a small manifest; the folder is snapshotted only when the turn
        first changes something), so that every prompt can be rewound to."""
        first_line = prompt.strip().splitlines()[0] if prompt.strip() else ""
        try:
            await asyncio.to_thread(self._start, message_id, first_line[:200])
        except Exception as exc:
            log.warning("cannot start a checkpoint (rewind to this prompt is off): %s", exc)
            self._turn = None

    def _start(self, message_id: str, prompt: str) -> None:
        with self.store.lock:
            # The previous prompt's last state (or a crashed process's) becomes its commit. A
            # failure leaves the pending file, which readers still take: not this prompt's
            # concern.
            try:
                self.store.fold(self.session_id)
            except Exception as exc:
                log.warning("cannot fold the pending checkpoint states (kept as they are): %s", exc)
            if self._seq == 0:
                existing = self.store.load(self.session_id)
                self._seq = existing[-1].seq if existing else 0
            self._seq += 1
            turn = _Turn(message_id=message_id, prompt=prompt, seq=self._seq, created=now())
            self.store.save(self._checkpoint(turn))
            self._turn = turn

    def list(self) -> list[Checkpoint]:
        """The saved checkpoints of this session, oldest first."""
        with self.store.lock:
            return self.store.load(self.session_id)

    def current(self) -> Checkpoint | None:
        """The checkpoint of the prompt whose turn is running, as it stands (``None``: no
        turn, or its checkpoint could not be started)."""
        return self._checkpoint(self._turn) if self._turn is not None else None

    def end_turn(self) -> None:
        """The prompt's turn ended: changes applied from now on (outside any prompt) belong to
        no checkpoint."""
        self._turn = None

    async def before_apply(self, changes: Sequence[FileChange]) -> None:
        """Before edits are applied: the first change of the turn snapshots the folder, and
        each file keeps the content its change was computed from (an open buffer's text and
        version) unless the turn changed it already."""
        await self._before(changes, shell=False)

    async def after_apply(
        self, paths: Sequence[Path], snapshots: Sequence[TextSnapshot] = ()
    ) -> None:
        """After edits to ``paths`` were applied (or refused): their current content is what
        the turn left, and the checkpoint is saved. ``snapshots`` are what the door returned
        for the changes it applied: a file it wrote on disk is taken from its snapshot (the
        bytes just written) instead of being read back."""
        written = {s.path: s for s in snapshots if s.source == "disk"}
        await self._after(paths, shell=False, written=written)

    async def before_shell(self) -> None:
        """Before a command that may change any file runs (a shell command): the folder is
        snapshotted."""
        await self._before((), shell=True)

    async def after_shell(self) -> None:
        """After the command: the folder is snapshotted again, every file that differs
        (edited, created, deleted, moved) joins the turn, and the checkpoint is saved."""
        await self._after((), shell=True)

    async def _before(self, changes: Sequence[FileChange], *, shell: bool) -> None:
        turn = self._turn
        if turn is None:
            return
        small = not shell and _text_size(changes) <= INLINE_BYTES
        try:
            await self._locked(lambda: self._take_before(turn, changes, shell), inline=small)
        except Exception as exc:
            log.warning("checkpoint before a change failed (rewind may miss files): %s", exc)
            turn.complete = False

    async def _after(
        self,
        paths: Sequence[Path],
        *,
        shell: bool,
        written: Mapping[Path, TextSnapshot] | None = None,
    ) -> None:
        turn = self._turn
        if turn is None or turn.tree is None:
            return
        after = {
            p: current_bytes(self.host, p, written=(written or {}).get(p))
            for p in paths
            if str(p) in turn.files
        }
        small = not shell and sum(len(data or b"") for data, _ in after.values()) <= INLINE_BYTES
        try:
            await self._locked(lambda: self._take_after(turn, after, shell), inline=small)
        except Exception as exc:
            log.warning("checkpoint after a change failed (rewind may miss files): %s", exc)
            turn.complete = False

    async def _locked(self, work: Callable[[], None], *, inline: bool) -> None:
        """Run ``work`` holding the store's lock: in this thread when ``inline`` and the lock
        is free at once (another session's snapshot may hold it for long: the loop must not
        wait on it), else in a worker thread."""
        if inline and self.store.lock.acquire(blocking=False):
            try:
                work()
            finally:
                self.store.lock.release()
            return

        def locked() -> None:
            with self.store.lock:
                work()

        await asyncio.to_thread(locked)

    def _take_before(self, turn: _Turn, changes: Sequence[FileChange], shell: bool) -> None:
        """Record the state before ``changes`` (or a shell command). Call holding the lock."""
        if shell:
            tree = self.store.snapshot()
            turn.tree = turn.tree or tree
            turn.shell_before = tree
        elif turn.tree is None:
            # An edit names its files: only they are read, no directory is walked.
            turn.tree = self.store.snapshot_paths([c.path for c in changes])
        for change in changes:
            key = str(change.path)
            if key in turn.files:
                continue
            if change.base is None:
                turn.files[key] = FileRecord(before=None, after=None)
                continue
            base = change.base
            data = encode_text(base.text, encoding=base.encoding, bom=base.bom)
            blob = self.store.put(data)
            version = base.version if base.source == "buffer" else None
            turn.files[key] = FileRecord(
                before=blob, after=blob, before_version=version, after_version=version
            )

    def _take_after(
        self,
        turn: _Turn,
        after: dict[Path, tuple[bytes | None, int | None]],
        shell: bool,
    ) -> None:
        """Record what the change (or shell command) left and save the checkpoint. Call
        holding the lock."""
        for path, (data, version) in after.items():
            blob = self.store.put(data) if data is not None else None
            record = turn.files[str(path)]
            turn.files[str(path)] = record.model_copy(
                update={"after": blob, "after_version": version}
            )
        if shell and turn.shell_before is not None:
            tree = self.store.snapshot()
            for change in self.store.changes(turn.shell_before, tree):
                key = str(self.store.root / change.path)
                old = turn.files.get(key)
                if old is None:
                    turn.files[key] = FileRecord(before=change.before, after=change.after)
                else:
                    turn.files[key] = old.model_copy(
                        update={"after": change.after, "after_version": None}
                    )
            turn.shell_before = None
            self.store.save_index()
        # A line in the session's pending file, not a commit: the next prompt's start makes it
        # one (see ``_start``); a crash in between loses nothing (``load`` reads it).
        if self.store.save_pending(self._checkpoint(turn)) > self.pending_fold_bytes:
            # Each line holds the whole manifest: a turn of many edits would make the file
            # (and every reader's parse of it) grow with the square of its files.
            self.store.fold(self.session_id)

    def _checkpoint(self, turn: _Turn) -> Checkpoint:
        return Checkpoint(
            session_id=self.session_id,
            message_id=turn.message_id,
            seq=turn.seq,
            created=turn.created,
            root=str(self.store.root),
            prompt=turn.prompt,
            tree=turn.tree,
            files=dict(turn.files),
            complete=turn.complete,
        )


def _text_size(changes: Sequence[FileChange]) -> int:
    """The characters of every change's new text and base text."""
    return sum(
        len(change.new_text) + (len(change.base.text) if change.base is not None else 0)
        for change in changes
    )
