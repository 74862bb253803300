"""The memory fingerprint: what the memory read from a list of paths depends on, taken with as
few system calls as give the same answer.

A fingerprint holds each path's editor text or stat (mtime, size, inode), the stat of each
folder holding one (a file created there) and of every folder under a ``.claude/rules`` folder
among them (a new rule). Two shortcuts leave the value unchanged:

- nothing below a folder that does not exist is stat'ed (its stat would fail too);
- with an :class:`Absent` memo kept between checks, an entry found missing in a folder whose
  stat had settled is not stat'ed again while that folder's stat is the same: creating,
  renaming or linking an entry into a folder changes the folder's modification time. A folder
  changed within :data:`SETTLED_NS` of the check is not trusted this way (timestamps are
  coarse: a second change within the same tick can leave them as they were), and an entry that
  is a dangling symbolic link is always stat'ed (its target may appear elsewhere).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.context.memory.read import Overlay

Stat = tuple[int, int, int]
"""``(st_mtime_ns, st_size, st_ino)``."""

SETTLED_NS = 2_000_000_000
"""How long ago (ns) a folder must have last changed for what is missing in it to be trusted
as missing while its stat stays the same: well above the timestamp granularity of common file
systems (a jiffy on Linux; FAT's two seconds)."""


def _stat(path: Path | str) -> Stat | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def _absent(path: str) -> bool:
    """Nothing at all at ``path`` (not even a dangling link)."""
    try:
        os.lstat(path)
    except (OSError, ValueError):
        return True
    return False


@dataclass(frozen=True, kw_only=True)
class FingerprintPlan:
    """What :func:`fingerprint` stats for one list of consulted paths, worked out once per
    load rather than once per check: the paths, their folders and the ``.claude/rules``
    trees among them, in order. ``parent`` is each path's folder as an index into
    ``folders``, ``folder_parent`` each folder's own folder there and ``rule_parent`` each
    rules tree's (``-1``: not among ``folders``); ``names`` and ``folder_names`` are the
    strings stat'ed (a ``Path`` would be converted at every check)."""

    paths: tuple[Path, ...]
    folders: tuple[Path, ...]
    rules: tuple[Path, ...]
    parent: tuple[int, ...]
    folder_parent: tuple[int, ...]
    rule_parent: tuple[int, ...]
    names: tuple[str, ...]
    folder_names: tuple[str, ...]

    @classmethod
    def of(cls, paths: Sequence[Path]) -> FingerprintPlan:
        """The plan for ``paths`` (absolute). Folders are sorted, so a folder's own folder
        comes before it."""
        folders = {p.parent for p in paths}
        rules = {f / "rules" for f in folders if f.name == ".claude"}
        rules |= {f for f in folders if ".claude" in f.parts and "rules" in f.parts}
        ordered = tuple(sorted(folders))
        index = {f: i for i, f in enumerate(ordered)}
        tops = tuple(sorted(rules))
        return cls(
            paths=tuple(paths),
            folders=ordered,
            rules=tops,
            parent=tuple(index[p.parent] for p in paths),
            folder_parent=tuple(index.get(f.parent, -1) if f.parent != f else -1 for f in ordered),
            rule_parent=tuple(index.get(top.parent, -1) for top in tops),
            names=tuple(map(str, paths)),
            folder_names=tuple(map(str, ordered)),
        )


@dataclass(kw_only=True)
class Absent:
    """What the last check found missing in settled folders (module docstring), for one
    :class:`FingerprintPlan`: the folders' stats by index, and the indices of the missing
    paths, folders and rules trees in them. Updated by each :func:`fingerprint` given it."""

    settled: dict[int, Stat] = field(default_factory=dict)
    paths: frozenset[int] = frozenset()
    folders: frozenset[int] = frozenset()
    rules: frozenset[int] = frozenset()


def fingerprint(
    paths: Sequence[Path],
    overlay: Overlay,
    *,
    plan: FingerprintPlan | None = None,
    absent: Absent | None = None,
    now_ns: int | None = None,
) -> tuple[Any, ...]:
    """What the memory read from ``paths`` depends on (module docstring). Equal
    fingerprints: the same memory would load. ``plan``: :meth:`FingerprintPlan.of` ``paths``,
    when the caller kept it; ``absent``: the memo of the previous check of the same plan,
    consulted and updated; ``now_ns``: the wall clock (``time.time_ns()``), for tests."""
    plan = plan if plan is not None else FingerprintPlan.of(paths)
    known = absent if absent is not None else Absent()
    same: set[int] = set()  # folders whose stat is the settled one their absences were seen in
    stats: list[Stat | None] = []
    for i, (name, up) in enumerate(zip(plan.folder_names, plan.folder_parent, strict=True)):
        if up >= 0 and (stats[up] is None or (up in same and i in known.folders)):
            stats.append(None)
            continue
        found = _stat(name)
        stats.append(found)
        if found is not None and known.settled.get(i) == found:
            same.add(i)
    files: list[tuple[Path, str | Stat | None]] = []
    for j, (p, name, i) in enumerate(zip(plan.paths, plan.names, plan.parent, strict=True)):
        text = overlay(p)
        if text is not None:
            files.append((p, text))
        elif stats[i] is None or (i in same and j in known.paths):
            files.append((p, None))
        else:
            files.append((p, _stat(name)))
    trees: list[tuple[str, Stat | None]] = []
    walked: set[int] = set()
    for k, (top, i) in enumerate(zip(plan.rules, plan.rule_parent, strict=True)):
        if i >= 0 and (stats[i] is None or (i in same and k in known.rules)):
            continue
        walked.add(k)
        for folder, dirs, _ in os.walk(top, followlinks=True):
            dirs.sort()
            trees.append((folder, _stat(folder)))
            if len(trees) > 1000:  # a pathological tree: the load itself caps it too
                break
    # With every existing folder unchanged since it settled, the memo is still exact.
    if absent is not None and len(same) < len(stats) - stats.count(None):
        _remember(
            plan,
            absent,
            stats=stats,
            files=files,
            trees=trees,
            walked=walked,
            same=same,
            now_ns=now_ns,
        )
    return (tuple(files), tuple(zip(plan.folders, stats, strict=True)), tuple(trees))


def _remember(
    plan: FingerprintPlan,
    absent: Absent,
    *,
    stats: Sequence[Stat | None],
    files: Sequence[tuple[Path, str | Stat | None]],
    trees: Sequence[tuple[str, Stat | None]],
    walked: set[int],
    same: set[int],
    now_ns: int | None,
) -> None:
    """Update ``absent`` with what this check found missing in settled folders (an entry
    skipped as missing in an unchanged one still is; one stat'ed as missing is checked for a
    dangling link)."""
    now = time.time_ns() if now_ns is None else now_ns
    settled = {
        i: found
        for i, found in enumerate(stats)
        if found is not None and now - found[0] >= SETTLED_NS
    }
    missing_paths = frozenset(
        j
        for j, ((_, value), i) in enumerate(zip(files, plan.parent, strict=True))
        if value is None
        and i in settled
        and ((i in same and j in absent.paths) or _absent(plan.names[j]))
    )
    missing_folders = frozenset(
        i
        for i, (found, up) in enumerate(zip(stats, plan.folder_parent, strict=True))
        if found is None
        and up in settled
        and ((up in same and i in absent.folders) or _absent(plan.folder_names[i]))
    )
    tops = {folder for folder, _ in trees}
    missing_rules = frozenset(
        k
        for k, (top, i) in enumerate(zip(plan.rules, plan.rule_parent, strict=True))
        if i in settled
        and (
            (k not in walked and i in same and k in absent.rules)
            or (k in walked and str(top) not in tops and _absent(str(top)))
        )
    )
    absent.settled = settled
    absent.paths, absent.folders, absent.rules = missing_paths, missing_folders, missing_rules
