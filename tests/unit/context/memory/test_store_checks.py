"""The per-batch memory check's shortcuts give the answers of the full check: nothing is
stat'ed below a folder that does not exist, and the real paths of the known memory files are
kept per load."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lsp_agent.context.memory.fingerprint import FingerprintPlan, fingerprint
from lsp_agent.context.memory.read import no_overlay
from lsp_agent.context.memory.store import MemoryStore

from .conftest import Tree


def full_fingerprint(paths: Sequence[Path]) -> tuple[Any, ...]:
    """The fingerprint with every path, folder and rules tree stat'ed (no shortcut)."""

    def stat(path: Path | str) -> tuple[int, int, int] | None:
        try:
            info = os.stat(path)
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino)

    plan = FingerprintPlan.of(paths)
    trees = []
    for top in plan.rules:
        for folder, dirs, _ in os.walk(top, followlinks=True):
            dirs.sort()
            trees.append((folder, stat(folder)))
    return (
        tuple((p, stat(p)) for p in plan.paths),
        tuple((f, stat(f)) for f in plan.folders),
        tuple(trees),
    )


def test_the_fingerprint_equals_the_full_one_as_folders_appear(tree: Tree) -> None:
    tree.write(tree.ws / "CLAUDE.md", "root")
    store = MemoryStore(spec=tree.spec)
    consulted = store.load().consulted
    # Most places of the load order are in folders that do not exist.
    assert any(not p.parent.exists() for p in consulted)
    plan = FingerprintPlan.of(consulted)
    steps: list[Callable[[], object]] = [
        lambda: None,
        lambda: (tree.home / ".claude").mkdir(parents=True),
        lambda: tree.write(tree.home / ".claude" / "CLAUDE.md", "user"),
        lambda: tree.write(tree.home / ".claude" / "rules" / "deep" / "r.md", "rule"),
        lambda: tree.write(tree.ws / ".claude" / "rules" / "p.md", "project rule"),
        lambda: tree.write(tree.managed, "managed"),
    ]
    seen: set[tuple[Any, ...]] = set()
    for step in steps:
        step()
        now = fingerprint(consulted, no_overlay, plan=plan)
        assert now == full_fingerprint(consulted)
        seen.add(now)
    assert len(seen) == len(steps)  # every step changed it


def test_files_and_rules_in_folders_created_later_load(tree: Tree) -> None:
    tree.write(tree.ws / "CLAUDE.md", "root")
    store = MemoryStore(spec=tree.spec)
    store.load()
    assert store.load() is store.load()
    tree.write(tree.home / ".claude" / "CLAUDE.md", "the user's own")
    assert "the user's own" in [f.text for f in store.load().files]
    tree.write(tree.home / ".claude" / "rules" / "deep" / "r.md", "a user rule")
    assert "a user rule" in [f.text for f in store.load().files]
    tree.write(tree.ws / ".claude" / "CLAUDE.md", "project dot-claude")
    assert "project dot-claude" in [f.text for f in store.load().files]


def test_a_reload_resolves_the_memory_files_links_again(tree: Tree) -> None:
    # The workspace's CLAUDE.md is a link; touching a file in src/ adds src/CLAUDE.md unless
    # the link leads to it (the same file is not shown twice). The real paths kept for the
    # touches belong to one load: after the link changes (a reload), they are worked out anew.
    tree.write(tree.ws / "shared" / "one.md", "one")
    tree.write(tree.ws / "src" / "CLAUDE.md", "src memory")
    link = tree.ws / "CLAUDE.md"
    link.symlink_to(tree.ws / "shared" / "one.md")
    store = MemoryStore(spec=tree.spec)
    store.load()
    assert store.touch([tree.ws / "lib" / "a.py"]) == ()  # resolves the link: shared/one.md
    link.unlink()
    link.symlink_to(tree.ws / "src" / "CLAUDE.md")
    assert [f.text for f in store.load().files] == ["src memory"]
    assert store.touch([tree.ws / "src" / "a.py"]) == ()


def test_after_batch_touches_then_loads(tree: Tree) -> None:
    tree.write(tree.ws / "CLAUDE.md", "root")
    tree.write(tree.ws / "src" / "CLAUDE.md", "src memory")
    store = MemoryStore(spec=tree.spec)
    store.load()
    first = store.load()  # the second load has the first one's plan: now it is kept
    added, loaded = store.after_batch([tree.ws / "src" / "a.py"])
    assert [f.text for f in added] == ["src memory"]
    assert loaded is first  # nothing changed: not read again
    tree.write(tree.ws / "CLAUDE.md", "root, edited")
    added, loaded = store.after_batch([tree.ws / "src" / "b.py"])
    assert added == ()
    assert [f.text for f in loaded.files] == ["root, edited"]


def test_a_file_in_the_session_folder_brings_only_matching_rules(tree: Tree) -> None:
    # Nothing lies between the session folder and such a file: only path rules can apply
    # (and without any, there is nothing to look at).
    bare = MemoryStore(spec=tree.spec)
    bare.load()
    assert bare.touch([tree.ws / "a.py", tree.ws]) == ()
    tree.write(tree.ws / ".claude" / "rules" / "py.md", "---\npaths: '*.py'\n---\npython rule")
    store = MemoryStore(spec=tree.spec)
    store.load()
    assert store.touch([tree.ws / "notes.txt"]) == ()
    assert [f.text for f in store.touch([tree.ws / "a.py"])] == ["python rule"]
    assert store.touch([tree.ws / "b.py"]) == ()  # once per session
