"""Auto memory: Claude Code's layout, the index cut, the permission exemption of exactly the
project's folder, and the memory block telling the model how to save."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.context.memory.automemory import (
    INDEX_MAX_LINES,
    auto_memory_dir,
    load_auto_memory,
    project_root,
    project_slug,
)
from lsp_agent.context.memory.loader import load_memory
from lsp_agent.context.memory.read import no_overlay
from lsp_agent.context.memory.render import render_memory
from lsp_agent.permissions.engine import PermissionEngine

from .conftest import Tree


def test_layout_follows_claude_code(tmp_path: Path) -> None:
    assert project_slug(Path("/home/me/my app.v2")) == "-home-me-my-app-v2"
    repo = tmp_path / "repo"
    (repo / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (repo / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    assert project_root(sub) == repo
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {repo / '.git' / 'worktrees' / 'wt'}\n")
    assert project_root(worktree) == repo  # worktrees share the main folder's memory
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_root(plain) in (plain, *plain.parents)
    home = tmp_path / "home"
    assert auto_memory_dir(home=home, cwd=sub) == (
        home / ".claude" / "projects" / project_slug(repo) / "memory"
    )


def test_index_loads_with_the_guide_and_is_cut_at_200_lines(tree: Tree) -> None:
    index = tree.home / ".claude" / "projects" / "x" / "memory" / "MEMORY.md"
    empty = load_auto_memory(index, overlay=no_overlay)
    assert "nothing saved yet" in empty.file.text
    assert str(index.parent) in empty.file.text and "date" in empty.file.text
    lines = [f"- 2026-11-{i % 28 + 1:02d} (source: user) memory {i}" for i in range(250)]
    tree.write(index, "\n".join(lines))
    cut = load_auto_memory(index, overlay=no_overlay)
    assert "memory 199" in cut.file.text and "memory 200" not in cut.file.text
    assert [n.code for n in cut.notices] == ["auto-memory-truncated"]
    assert len(cut.file.text.split("\n")) < INDEX_MAX_LINES + 30


def test_auto_memory_is_last_in_the_block(tree: Tree) -> None:
    tree.write(tree.ws / "CLAUDE.md", "project")
    index = tree.write(tree.home / ".claude" / "projects" / "p" / "memory" / "MEMORY.md", "- x")
    loaded = load_memory(tree.spec(auto_memory=index))
    assert [f.kind for f in loaded.files if tree.base in f.path.parents][-1] == "auto"
    text = render_memory(loaded.files) or ""
    assert text.index("project") < text.index("auto memory")


def test_only_the_projects_memory_folder_is_exempt_from_the_sensitive_rule(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / "-root" / "memory"
    folder.mkdir(parents=True)
    other = home / ".claude" / "projects" / "-other" / "memory" / "MEMORY.md"

    def decide(mode: str, path: Path) -> tuple[str, bool]:
        engine = PermissionEngine(
            mode=mode,  # type: ignore[arg-type]
            roots=(root,),
            home=home,
            auto_memory=folder,
        )
        d = engine.decide(tool="Write", read_only=False, kind="edit", paths=(path,), raw_input={})
        return d.behavior, d.hard

    assert decide("acceptEdits", folder / "MEMORY.md") == ("allow", False)
    assert decide("default", folder / "feedback.md") == ("ask", False)  # reviewed like an edit
    assert decide("acceptEdits", home / ".claude" / "settings.json")[0] == "ask"
    assert decide("acceptEdits", home / ".claude" / "CLAUDE.md")[0] == "ask"
    assert decide("acceptEdits", other)[0] == "ask"
    without = PermissionEngine(mode="acceptEdits", roots=(root,), home=home)
    decision = without.decide(
        tool="Write", read_only=False, kind="edit", paths=(folder / "MEMORY.md",), raw_input={}
    )
    assert decision.behavior == "ask"
