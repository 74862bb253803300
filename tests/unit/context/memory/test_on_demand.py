"""On demand: a subfolder's memory and path-scoped rules when a tool touches a file there."""

from __future__ import annotations

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
