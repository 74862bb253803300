"""The memory fingerprint's memo of missing entries: while a settled folder's stat is the
same, what was missing in it is not stat'ed again, and the value stays the full fingerprint's
as files, rules and folders appear; a dangling link and a folder that just changed are
always stat'ed."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.context.memory import fingerprint as fp
from lsp_agent.context.memory.fingerprint import Absent, FingerprintPlan, fingerprint
from lsp_agent.context.memory.read import no_overlay
from lsp_agent.context.memory.store import MemoryStore

from .conftest import Tree
from .test_store_checks import full_fingerprint

LONG_AGO_S = 100.0


def settle(plan: FingerprintPlan) -> None:
    """Date every existing folder of ``plan`` back, as if it had not changed for a while."""
    then = time.time() - LONG_AGO_S
    for folder in plan.folders:
        if folder.exists():
            os.utime(folder, (then, then))


class Counted:
    """Counts the paths :mod:`fingerprint` stats."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        real = fp._stat

        def counted(path: Path | str) -> Any:
            self.paths.append(str(path))
            return real(path)

        monkeypatch.setattr(fp, "_stat", counted)

    def take(self) -> list[str]:
        out, self.paths = self.paths, []
        return out


def consulted(tree: Tree) -> tuple[Path, ...]:
    tree.write(tree.home / ".claude" / "CLAUDE.md", "user")
    return MemoryStore(spec=tree.spec).load().consulted


def test_missing_entries_of_settled_folders_are_stat_ed_once(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = consulted(tree)
    plan = FingerprintPlan.of(paths)
    settle(plan)
    counted, absent = Counted(monkeypatch), Absent()
    first = fingerprint(paths, no_overlay, plan=plan, absent=absent)
    assert first == full_fingerprint(paths)
    full = counted.take()
    second = fingerprint(paths, no_overlay, plan=plan, absent=absent)
    assert second == first
    again = counted.take()
    assert len(again) < len(full)
    # Existing files and folders are still stat'ed: an edit changes no folder.
    assert str(tree.home / ".claude" / "CLAUDE.md") in again
    assert str(tree.ws) in again
    assert str(tree.ws / "CLAUDE.md") not in again


def test_entries_appearing_in_settled_folders_change_it(tree: Tree) -> None:
    paths = consulted(tree)
    plan = FingerprintPlan.of(paths)
    absent = Absent()
    steps = [
        lambda: tree.write(tree.ws / "CLAUDE.md", "project"),
        lambda: tree.write(tree.ws / "CLAUDE.local.md", "local"),
        lambda: tree.write(tree.ws / ".claude" / "CLAUDE.md", "project, in .claude"),
        lambda: tree.write(tree.ws / ".claude" / "rules" / "r.md", "rule"),
        lambda: tree.write(tree.home / ".claude" / "rules" / "u.md", "user rule"),
        lambda: tree.write(tree.top / "CLAUDE.md", "above"),
        lambda: tree.write(tree.managed, "managed"),
    ]
    seen = set()
    for step in steps:
        settle(plan)
        before = fingerprint(paths, no_overlay, plan=plan, absent=absent)
        assert fingerprint(paths, no_overlay, plan=plan, absent=absent) == before
        step()
        now = fingerprint(paths, no_overlay, plan=plan, absent=absent)
        assert now == full_fingerprint(paths)
        assert now != before
        seen.add(now)
    assert len(seen) == len(steps)


def test_a_dangling_link_is_stat_ed_until_its_target_appears(tree: Tree) -> None:
    target = tree.base / "elsewhere" / "shared.md"
    (tree.ws / "CLAUDE.md").symlink_to(target)
    paths = consulted(tree)
    plan = FingerprintPlan.of(paths)
    settle(plan)
    absent = Absent()
    before = fingerprint(paths, no_overlay, plan=plan, absent=absent)
    assert fingerprint(paths, no_overlay, plan=plan, absent=absent) == before
    tree.write(target, "shared")  # in a folder the fingerprint does not stat
    now = fingerprint(paths, no_overlay, plan=plan, absent=absent)
    assert now != before
    assert now == full_fingerprint(paths)


def test_a_folder_that_just_changed_is_not_trusted(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = consulted(tree)
    plan = FingerprintPlan.of(paths)
    settle(plan)
    os.utime(tree.ws)  # changed just now: a second change could keep its timestamp
    counted, absent = Counted(monkeypatch), Absent()
    fingerprint(paths, no_overlay, plan=plan, absent=absent)
    counted.take()
    fingerprint(paths, no_overlay, plan=plan, absent=absent)
    assert str(tree.ws / "CLAUDE.md") in counted.take()
    # Once it has settled (by the clock the check is given), its missing files are trusted.
    later = time.time_ns() + fp.SETTLED_NS + 1
    fingerprint(paths, no_overlay, plan=plan, absent=absent, now_ns=later)
    counted.take()
    fingerprint(paths, no_overlay, plan=plan, absent=absent, now_ns=later)
    assert str(tree.ws / "CLAUDE.md") not in counted.take()
