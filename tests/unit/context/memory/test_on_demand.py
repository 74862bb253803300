"""On demand: a subfolder's memory and path-scoped rules when a tool touches a file there."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.context.memory import discover
from lsp_agent.context.memory.store import MemoryStore, touched_paths

from .conftest import Tree


def test_touching_files_adds_subfolder_memory_and_matching_rules_once(tree: Tree) -> None:
    tree.write(tree.ws / "CLAUDE.md", "root")
    tree.write(tree.ws / "src" / "CLAUDE.md", "src memory @notes.md")
    tree.write(tree.ws / "src" / "notes.md", "src notes")
    tree.write(tree.ws / "src" / "api" / "AGENTS.md", "api agents")
    tree.write(tree.ws / "src" / "api" / ".claude" / "rules" / "deep.md", "deep rule")
    tree.write(
        tree.ws / ".claude" / "rules" / "api.md",
        '---\npaths: ["src/api/**/*.{ts,tsx}"]\n---\napi rule',
    )
    tree.write(tree.ws / "docs" / "CLAUDE.md", "docs memory")
    store = MemoryStore(spec=tree.spec)
    store.load()
    assert tree.mine(store.loaded.files) == ["top/ws/CLAUDE.md"]
    first = store.touch([tree.ws / "src" / "api" / "handler.py"])
    assert tree.mine(first) == [
        "top/ws/src/notes.md",
        "top/ws/src/CLAUDE.md",
        "top/ws/src/api/.claude/rules/deep.md",
        "top/ws/src/api/AGENTS.md",
    ]
    assert all(f.on_demand for f in first)
    second = store.touch([tree.ws / "src" / "api" / "handler.ts", tree.ws / "src" / "x.py"])
    assert tree.mine(second) == ["top/ws/.claude/rules/api.md"]
    assert store.touch([tree.ws / "src" / "api" / "other.tsx"]) == ()
    text = store.after_tools([("Read", {"file_path": str(tree.ws / "docs" / "a.md")}, "1\ta")])
    assert text is not None and "docs memory" in text
    assert store.after_tools([("Bash", {"command": "cat docs/x"}, "")]) is None


def test_nothing_on_demand_from_an_untrusted_workspace(tree: Tree) -> None:
    tree.write(tree.ws / "src" / "CLAUDE.md", "src memory")
    tree.write(tree.ws / ".claude" / "rules" / "any.md", "---\npaths: '**'\n---\nscoped")
    store = MemoryStore(spec=lambda: tree.spec(trusted=False))
    store.load()
    assert store.touch([tree.ws / "src" / "a.py"]) == ()


def test_user_rules_with_paths_match_relative_to_the_session_folder(tree: Tree) -> None:
    tree.write(tree.home / ".claude" / "rules" / "py.md", "---\npaths: '**/*.py'\n---\npy")
    store = MemoryStore(spec=tree.spec)
    store.load()
    assert tree.mine(store.touch([tree.ws / "a" / "b.py"])) == ["home/.claude/rules/py.md"]


def test_touched_paths_from_tool_inputs() -> None:
    uses = [
        ("Read", {"file_path": "/p/a.py"}),
        ("Edit", {"file_path": "relative.py"}),
        ("Grep", {"path": "/p/src", "pattern": "x"}),
        ("Bash", {"command": "ls /p"}),
        ("Write", {"file_path": "/p/a.py"}),
    ]
    assert [str(p) for p in touched_paths(uses)] == ["/p/a.py", "/p/src"]


def test_a_folder_holding_no_memory_is_looked_at_once_per_batch_and_again_later(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Files touched together in one folder look at it once; the next batch looks again, so
    # a memory file created there in between loads.
    looked: list[Path] = []
    real = discover._holds_none_now

    def counted(folder: Path, overlay: discover.Overlay) -> bool:
        looked.append(folder)
        return real(folder, overlay)

    monkeypatch.setattr(discover, "_holds_none_now", counted)
    src = tree.ws / "src"
    for name in ("a.py", "b.py", "c.py"):
        tree.write(src / name, "x = 1\n")
    store = MemoryStore(spec=tree.spec)
    store.load()
    assert store.touch([src / "a.py", src / "b.py", src / "c.py"]) == ()
    assert looked == [src]
    tree.write(src / "CLAUDE.md", "src memory")
    assert tree.mine(store.touch([src / "a.py"])) == ["top/ws/src/CLAUDE.md"]


@pytest.mark.parametrize(
    "place",
    ["CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", ".claude/CLAUDE.md", ".claude/rules/r.md"],
)
def test_every_place_in_a_folder_is_found_on_demand(tree: Tree, place: str) -> None:
    tree.write(tree.ws / "src" / place, f"memory at {place}")
    store = MemoryStore(spec=tree.spec)
    store.load()
    assert tree.mine(store.touch([tree.ws / "src" / "a.py"])) == [f"top/ws/src/{place}"]


@pytest.mark.parametrize("place", ["CLAUDE.md", ".claude/CLAUDE.md", "AGENTS.md"])
def test_an_unsaved_buffer_in_a_folder_without_memory_on_disk_loads(tree: Tree, place: str) -> None:
    src = tree.ws / "src"
    tree.write(src / "a.py", "x = 1\n")
    buffers = {src / place: "unsaved memory"}
    store = MemoryStore(spec=tree.spec, overlay=buffers.get)
    store.load()
    added = store.touch([src / "a.py"])
    assert [f.text for f in added] == ["unsaved memory"]
