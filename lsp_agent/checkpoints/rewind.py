"""Rewinding code: undo what the turns from one prompt on did to files, keeping the user's own
later changes.

Each checkpoint says, per file, the content before the turn's first change and after its last
(:class:`~.records.FileRecord`). Rewinding to a prompt reverts the checkpoints from the newest
back to that prompt's, one by one, for every file one of them changed:

- the file is as the turn left it → it gets the content from before the turn (a file the turn
  created is removed, one it deleted comes back);
- the turn left it as it found it → untouched;
- it changed since (the user typed, saved, or ran something) → three-way merge
  (:func:`~lsp_agent.workspace.merge.merge3`) with the turn's result as the base, the file now
  as ours and the content before the turn as theirs: what does not overlap is kept from both;
  overlapping regions get conflict markers with both versions, for the user to choose. Nothing
  the user wrote is dropped. A door that can ask the user
  (:mod:`lsp_agent.sessions.rewind_review`) may instead resolve a file's overlapping regions to
  one side (:data:`Resolution`). A binary file (or a file deleted on one side and changed on the
  other) that changed since is left as it is and reported as a conflict.

Reverting is idempotent: a file already back to its earlier content merges to itself. Files
open in the editor are changed through one versioned edit of the door (``Host.apply_changes``,
so the editor's undo works); closed files are written atomically on disk, created ones
removed. Nothing else on disk is touched.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from lsp_agent.checkpoints.recorder import current_bytes
from lsp_agent.checkpoints.records import Checkpoint
from lsp_agent.protocol.documents import FileChange
from lsp_agent.protocol.host import Host
from lsp_agent.workspace.merge import MergeResult, merge3
from lsp_agent.workspace.textfile import (
    NotTextError,
    StaleChangeError,
    decode_bytes,
    encode_text,
    guard_write,
    write_text_atomic,
)

OURS_LABEL = "yours (changed since the checkpoint)"
THEIRS_LABEL = "checkpoint"

Resolution = Literal["checkpoint", "mine", "markers"]
"""How a file's overlapping regions are resolved: the checkpoint's lines, the user's lines, or
both between conflict markers (the default: nothing is lost)."""


@dataclass(frozen=True, kw_only=True)
class FileConflict:
    """A file whose later changes overlap what is being reverted: ``regions`` conflict
    markers were written into it (0 for a binary file or a delete/change conflict, which is
    left as it is)."""

    path: Path
    regions: int
    reason: str


@dataclass(frozen=True, kw_only=True)
class CodeRewind:
    """The outcome of a code rewind: files given back their earlier content, files removed
    (the turns created them), conflicts, and ``failure`` (why some change could not be
    applied: the editor refused or the disk failed; ``None`` when all was applied)."""

    restored: tuple[Path, ...] = ()
    removed: tuple[Path, ...] = ()
    conflicts: tuple[FileConflict, ...] = ()
    failure: str | None = None


@dataclass(kw_only=True)
class _Plan:
    targets: dict[Path, bytes | None] = field(default_factory=dict)
    conflicts: dict[Path, FileConflict] = field(default_factory=dict)
    resolve: Mapping[Path, Resolution] = field(default_factory=dict)


Blobs = Callable[[str], bytes]
"""Reads a blob of the shadow store by id."""


def _revert(
    path: Path,
    now: bytes | None,
    before: bytes | None,
    after: bytes | None,
    plan: _Plan,
) -> bytes | None:
    """The content of ``path`` once one turn (``before`` → ``after``) is undone from ``now``."""
    if now == after:
        return before
    if before in (after, now):
        return now
    if now is None or before is None or after is None:
        why = "deleted on one side and changed on the other since the checkpoint; left as is"
        plan.conflicts[path] = FileConflict(path=path, regions=0, reason=why)
        return now
    try:
        now_text, encoding, bom = decode_bytes(now)
        before_text = decode_bytes(before)[0]
        after_text = decode_bytes(after)[0]
    except NotTextError:
        why = "binary file changed since the checkpoint; left as is"
        plan.conflicts[path] = FileConflict(path=path, regions=0, reason=why)
        return now
    merged = merge3(
        after_text, now_text, before_text, ours_label=OURS_LABEL, theirs_label=THEIRS_LABEL
    )
    how = plan.resolve.get(path, "markers")
    if merged.conflicts and how != "markers":
        return encode_text(resolved(merged, how), encoding=encoding, bom=bom)
    if merged.conflicts:
        count = len(merged.conflicts)
        prior = plan.conflicts.get(path)
        total = count + (prior.regions if prior is not None else 0)
        why = f"{total} region(s) you changed since the checkpoint overlap the turn's changes"
        plan.conflicts[path] = FileConflict(path=path, regions=total, reason=why)
    return encode_text(merged.text, encoding=encoding, bom=bom)


def resolved(merged: MergeResult, how: Resolution) -> str:
    """``merged``'s text with each conflict region replaced by one side: the checkpoint's
    lines (``theirs``) or the user's (``ours``); ``markers`` keeps the text as merged."""
    if how == "markers":
        return merged.text
    lines = merged.text.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    for conflict in merged.conflicts:
        out.extend(lines[at : conflict.start_line])
        out.append(conflict.theirs if how == "checkpoint" else conflict.ours)
        at = conflict.end_line
    out.extend(lines[at:])
    return "".join(out)


def plan_rewind(
    checkpoints: Sequence[Checkpoint],
    *,
    host: Host,
    blobs: Blobs,
    resolve: Mapping[Path, Resolution] | None = None,
) -> tuple[dict[Path, bytes | None], tuple[FileConflict, ...]]:
    """What every file should become when ``checkpoints`` (those from the rewind target on,
    any order) are undone: path → new content (``None``: remove), and the conflicts. Only
    files whose content changes appear. ``resolve`` says how to settle the overlapping
    regions of some files (others get conflict markers; a file resolved to one side is no
    longer a conflict). Raises ``KeyError`` when the store lacks a blob."""
    plan = _Plan(resolve=resolve or {})
    current: dict[Path, bytes | None] = {}
    for checkpoint in sorted(checkpoints, key=lambda c: c.seq, reverse=True):
        for key, record in checkpoint.files.items():
            path = Path(key)
            if path not in current:
                current[path] = current_bytes(host, path)[0]
            before = blobs(record.before) if record.before is not None else None
            after = blobs(record.after) if record.after is not None else None
            current[path] = _revert(path, current[path], before, after, plan)
    for path, content in current.items():
        if content != current_bytes(host, path)[0]:
            plan.targets[path] = content
        conflict = plan.conflicts.get(path)
        if conflict is not None and conflict.regions and content is not None:
            plan.conflicts[path] = _located(conflict, content)
    return plan.targets, tuple(plan.conflicts.values())


def marker_lines(content: bytes) -> tuple[tuple[int, int], ...]:
    """The conflict regions a rewind wrote into ``content``: (first, last) 1-based line
    numbers of each, from its ``<<<<<<< yours`` line to its ``>>>>>>> checkpoint`` line."""
    start = f"<<<<<<< {OURS_LABEL}".encode()
    end = f">>>>>>> {THEIRS_LABEL}".encode()
    regions: list[tuple[int, int]] = []
    first: int | None = None
    for number, line in enumerate(content.splitlines(), start=1):
        stripped = line.rstrip(b"\r")
        if stripped == start:
            first = number
        elif stripped == end and first is not None:
            regions.append((first, number))
            first = None
    return tuple(regions)


def _located(conflict: FileConflict, content: bytes) -> FileConflict:
    """``conflict`` with the lines of its marker regions in the file as written."""
    regions = marker_lines(content)
    if not regions:
        return conflict
    spans = [f"{a}-{b}" for a, b in regions]
    where = spans[0] if len(spans) == 1 else ", ".join(spans[:-1]) + " and " + spans[-1]
    reason = (
        f"conflict markers at lines {where}: what you changed there since the checkpoint "
        "overlaps the turn's change; keep the side you want and delete the markers"
    )
    return FileConflict(path=conflict.path, regions=len(regions), reason=reason)


async def apply_rewind(
    targets: dict[Path, bytes | None], conflicts: Sequence[FileConflict], *, host: Host
) -> CodeRewind:
    """Apply a plan from :func:`plan_rewind`: open buffers through one ``host.apply_changes``
    batch (the editor's undo covers it); closed files written atomically (exact bytes) or
    removed; then the door is told which files changed on disk."""
    in_editor: list[FileChange] = []
    restored: list[Path] = []
    removed: list[Path] = []
    failures: list[str] = []
    for path, content in sorted(targets.items()):
        buffered = host.buffer(path)
        if buffered is not None and content is not None:
            try:
                text = content.decode(buffered.encoding).removeprefix("\ufeff")
            except (UnicodeDecodeError, LookupError):
                text = decode_bytes(content)[0]
            in_editor.append(FileChange(path=path, base=buffered, new_text=text))
            continue
        try:
            guard_write(path)
            if content is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                removed.append(path)
            else:
                # latin-1 maps each byte to one code point: the exact bytes are written.
                write_text_atomic(path, content.decode("latin-1"), encoding="latin-1")
                restored.append(path)
        except (OSError, StaleChangeError) as exc:
            failures.append(f"{path}: {exc}")
    disk_paths = [*restored, *removed]
    if in_editor:
        result = await host.apply_changes(in_editor, label="Rewind")
        if result.applied:
            restored.extend(change.path for change in in_editor)
        else:
            failures.append(f"the editor refused the rewind of open files: {result.failure}")
    if disk_paths:
        await host.files_changed_on_disk(sorted(disk_paths))
    return CodeRewind(
        restored=tuple(sorted(restored)),
        removed=tuple(sorted(removed)),
        conflicts=tuple(conflicts),
        failure="; ".join(failures) or None,
    )


def checkpoints_from(checkpoints: Sequence[Checkpoint], message_id: str) -> list[Checkpoint]:
    """The checkpoints of the prompt ``message_id`` and every later one. Raises ``KeyError``
    when no checkpoint has that id (a unique prefix of at least 6 characters is accepted)."""
    ordered = sorted(checkpoints, key=lambda c: c.seq)
    exact = [c for c in ordered if c.message_id == message_id]
    matches = exact or (
        [c for c in ordered if c.message_id.startswith(message_id)] if len(message_id) >= 6 else []
    )
    if len(matches) != 1:
        raise KeyError(message_id)
    return [c for c in ordered if c.seq >= matches[0].seq]
