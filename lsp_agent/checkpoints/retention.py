"""Checkpoint retention: the shadow stores do not grow forever.

A session's checkpoints are removed once nothing can rewind to them any more: the session has
no transcript (transcript retention deleted it, or it was never saved) and its newest
checkpoint is older than the retention period (the transcripts' own, 30 days by default), so a
session that was not saved keeps its checkpoints as long as a saved one would. Removing them
deletes their references; the objects nothing references any more (no checkpoint, nor the
store's stat cache, which names the blobs of the folder's last snapshot) are then deleted
from the store's loose objects. An object younger than ``grace_s`` is always kept: another
process may be writing a checkpoint that will reference it (git's own ``gc`` keeps unreachable
objects two weeks for the same reason).

All of it blocks (disk I/O); callers run it where a slow start is acceptable (it runs at a
door's start, after the transcripts' retention).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.checkpoints.objects import REF_PREFIX, pending_path, safe_name
from lsp_agent.checkpoints.records import Checkpoint

if TYPE_CHECKING:
    import pygit2

log = logging.getLogger(__name__)

DAY_S = 86400
"""Seconds in a day."""

GRACE_S = 3600.0
"""Unreferenced objects younger than this (seconds) are kept: a checkpoint being written by
another process may not reference its objects yet."""


@dataclass(frozen=True, kw_only=True)
class Collected:
    """What a collection removed: sessions whose checkpoints went, references deleted, loose
    objects deleted and the bytes they used."""

    sessions: tuple[str, ...] = ()
    refs: int = 0
    objects: int = 0
    bytes: int = 0


def collect(
    folder: Path,
    *,
    saved: Collection[str],
    days: float,
    now: float | None = None,
    grace_s: float = GRACE_S,
) -> Collected:
    """Collect every shadow store under ``folder`` (the data folder's ``checkpoints``):
    remove the checkpoints of sessions not in ``saved`` (the ids of the sessions that still
    have a transcript) whose newest checkpoint is older than ``days`` days, then their
    unreferenced objects. ``days <= 0`` keeps everything. A store that cannot be read is
    logged and skipped."""
    if days <= 0 or not folder.is_dir():
        return Collected()
    when = time.time() if now is None else now
    keep = {safe_name(s) for s in saved}
    total = Collected()
    for store in sorted(folder.iterdir()):
        if not (store / "HEAD").is_file():
            continue
        try:
            done = _collect_store(
                store, keep=keep, cutoff=when - days * DAY_S, now=when, grace_s=grace_s
            )
        except Exception as exc:
            log.warning("cannot collect the checkpoints in %s: %s", store, exc)
            continue
        total = Collected(
            sessions=(*total.sessions, *done.sessions),
            refs=total.refs + done.refs,
            objects=total.objects + done.objects,
            bytes=total.bytes + done.bytes,
        )
    return total


def _collect_store(
    path: Path, *, keep: set[str], cutoff: float, now: float, grace_s: float
) -> Collected:
    import pygit2

    repo = pygit2.Repository(str(path))
    by_session: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for name in repo.references:
        if not name.startswith(REF_PREFIX):
            continue
        session = name[len(REF_PREFIX) :].split("/", 1)[0]
        try:
            commit = repo.references[name].peel(pygit2.Commit)
        except (pygit2.GitError, ValueError):
            continue
        by_session[session].append((name, commit.commit_time))
    gone = sorted(
        s for s, refs in by_session.items() if s not in keep and max(t for _, t in refs) < cutoff
    )
    if not gone:
        return Collected()
    refs = 0
    for session in gone:
        for name, _ in by_session[session]:
            repo.references.delete(name)
            refs += 1
        pending_path(path, session).unlink(missing_ok=True)
    objects, freed = _prune(repo, path, now=now, grace_s=grace_s)
    return Collected(sessions=tuple(gone), refs=refs, objects=objects, bytes=freed)


def _prune(repo: pygit2.Repository, path: Path, *, now: float, grace_s: float) -> tuple[int, int]:
    """Delete the loose objects of ``repo`` that no reference and no index entry reaches
    and that are older than ``grace_s``; how many and their bytes."""
    import pygit2

    reachable: set[str] = set()
    pending: list[pygit2.Oid] = []
    for name in repo.references:
        try:
            pending.append(repo.references[name].peel(pygit2.Commit).id)
        except (pygit2.GitError, ValueError):
            continue
    pending.extend(pygit2.Oid(hex=name) for name in _pending_roots(path))
    index_file = path / "index"
    if index_file.is_file():
        reachable.update(str(entry.id) for entry in pygit2.Index(str(index_file)))
    while pending:
        oid = pending.pop()
        key = str(oid)
        if key in reachable:
            continue
        reachable.add(key)
        obj = repo.get(oid)
        if isinstance(obj, pygit2.Commit):
            pending.append(obj.tree_id)
            pending.extend(obj.parent_ids)
        elif isinstance(obj, pygit2.Tree):
            pending.extend(entry.id for entry in obj)
    removed = freed = 0
    for shard in (path / "objects").glob("[0-9a-f][0-9a-f]"):
        for loose in shard.iterdir():
            if shard.name + loose.name in reachable:
                continue
            try:
                stat = loose.stat()
                if now - stat.st_mtime < grace_s:
                    continue
                loose.unlink()
            except OSError:
                continue
            removed += 1
            freed += stat.st_size
    return removed, freed


def _pending_roots(path: Path) -> list[str]:
    """The trees and blobs the pending states of the store at ``path`` name (see
    ``ShadowStore.save_pending``): no reference reaches them until they are folded."""
    names: list[str] = []
    for pending_file in (path / "pending").glob("*.lines"):
        for line in pending_file.read_bytes().split(b"\n"):
            try:
                checkpoint = Checkpoint.model_validate_json(line)
            except ValueError:
                continue
            if checkpoint.tree:
                names.append(checkpoint.tree)
            for record in checkpoint.files.values():
                names += [blob for blob in (record.before, record.after) if blob]
    return names
