"""The load order: managed, user, user rules, ancestors top-down, local, rules, AGENTS.md."""

from __future__ import annotations

import os
from pathlib import Path

from lsp_agent.context.memory.discover import ancestors_top_down, managed_memory_path
from lsp_agent.context.memory.loader import load_memory
from lsp_agent.context.memory.read import LARGE_FILE_CHARS, MAX_FILE_BYTES
from lsp_agent.context.memory.render import render_memory

from .conftest import Tree


def full_tree(tree: Tree) -> None:
    tree.write(tree.managed, "managed says hi")
    tree.write(tree.home / ".claude" / "CLAUDE.md", "user says hi")
    tree.write(tree.home / ".claude" / "rules" / "b.md", "user rule b")
    tree.write(tree.home / ".claude" / "rules" / "a" / "z.md", "user rule a/z")
    tree.write(tree.home / ".claude" / "rules" / "py.md", "---\npaths: '**/*.py'\n---\npy rule")
    tree.write(tree.top / "CLAUDE.md", "ancestor says hi")
    tree.write(tree.top / "CLAUDE.local.md", "ancestor local")
    tree.write(tree.ws / "CLAUDE.md", "project says hi")
    tree.write(tree.ws / ".claude" / "CLAUDE.md", "dot-claude says hi")
    tree.write(tree.ws / ".claude" / "rules" / "general.md", "general rule")
    tree.write(
        tree.ws / ".claude" / "rules" / "api.md",
        '---\npaths:\n  - "src/api/**/*.{ts,tsx}"\n---\napi rule',
    )
    tree.write(tree.ws / "CLAUDE.local.md", "local says hi")
    tree.write(tree.ws / "AGENTS.md", "agents: not read next to a CLAUDE.md")
    tree.write(tree.ws / "sub" / "CLAUDE.md", "subfolder: on demand only")


def test_every_kind_in_claude_codes_order(tree: Tree) -> None:
    full_tree(tree)
    loaded = load_memory(tree.spec())
    assert tree.mine(loaded.files) == [
        "etc/CLAUDE.md",
        "home/.claude/CLAUDE.md",
        "home/.claude/rules/a/z.md",
        "home/.claude/rules/b.md",
        "top/CLAUDE.md",
        "top/CLAUDE.local.md",
        "top/ws/CLAUDE.md",
        "top/ws/.claude/CLAUDE.md",
        "top/ws/.claude/rules/general.md",
        "top/ws/CLAUDE.local.md",
    ]
    kinds = [f.kind for f in loaded.files if tree.base in f.path.parents]
    assert kinds == [
        "managed", "user", "user-rule", "user-rule", "project", "local", "project",
        "project", "project-rule", "local",
    ]  # fmt: skip
    assert tree.mine(loaded.rules) == ["home/.claude/rules/py.md", "top/ws/.claude/rules/api.md"]
    assert loaded.rules[1].globs == ("src/api/**/*.{ts,tsx}",)
    assert loaded.notices == ()


def test_rendered_block_names_each_file_in_order(tree: Tree) -> None:
    full_tree(tree)
    text = render_memory(load_memory(tree.spec()).files)
    assert text is not None
    order = [
        f"Contents of {tree.managed} (managed",
        "managed says hi",
        f"Contents of {tree.home / '.claude' / 'CLAUDE.md'} (user's private global",
        "ancestor says hi",
        "project says hi",
        "general rule",
        f"Contents of {tree.ws / 'CLAUDE.local.md'} (user's private project instructions",
        "local says hi",
    ]
    positions = [text.index(s) for s in order]
    assert positions == sorted(positions)
    for absent in ("api rule", "py rule", "subfolder", "agents: not read"):
        assert absent not in text


def test_agents_md_where_a_folder_has_no_claude_md(tree: Tree) -> None:
    tree.write(tree.top / "AGENTS.md", "top agents")
    tree.write(tree.ws / "AGENTS.md", "ws agents")
    tree.write(tree.ws / "CLAUDE.local.md", "local")
    loaded = load_memory(tree.spec())
    assert tree.mine(loaded.files) == ["top/AGENTS.md", "top/ws/CLAUDE.local.md"]
    both = load_memory(tree.spec(instruction_files="claude-md-and-agents-md"))
    assert tree.mine(both.files) == [
        "top/AGENTS.md",
        "top/ws/CLAUDE.local.md",
        "top/ws/AGENTS.md",
    ]
    never = load_memory(tree.spec(instruction_files="claude-md"))
    assert tree.mine(never.files) == ["top/ws/CLAUDE.local.md"]


def test_a_claude_md_importing_agents_md_does_not_double_it(tree: Tree) -> None:
    tree.write(tree.ws / "AGENTS.md", "shared instructions")
    tree.write(tree.ws / "CLAUDE.md", "@AGENTS.md\n\nClaude only")
    loaded = load_memory(tree.spec(instruction_files="claude-md-and-agents-md"))
    assert tree.mine(loaded.files) == ["top/ws/AGENTS.md", "top/ws/CLAUDE.md"]
    text = render_memory(loaded.files) or ""
    assert text.count("shared instructions") == 1


def test_claude_md_excludes_but_never_the_managed_file(tree: Tree) -> None:
    full_tree(tree)
    loaded = load_memory(
        tree.spec(excludes=("**/top/CLAUDE.md", f"{tree.ws}/.claude/rules/**", str(tree.managed)))
    )
    names = tree.mine(loaded.files)
    assert "top/CLAUDE.md" not in names
    assert "top/ws/.claude/rules/general.md" not in names
    assert "etc/CLAUDE.md" in names
    assert "top/ws/CLAUDE.md" in names


def test_large_file_warns_huge_file_is_skipped(tree: Tree) -> None:
    tree.write(tree.ws / "CLAUDE.md", "x" * (LARGE_FILE_CHARS + 1))
    tree.write(tree.ws / "CLAUDE.local.md", b"y" * (MAX_FILE_BYTES + 1))
    loaded = load_memory(tree.spec())
    assert tree.mine(loaded.files) == ["top/ws/CLAUDE.md"]
    codes = {(n.path.name, n.code) for n in loaded.notices}
    assert codes == {("CLAUDE.md", "large-file"), ("CLAUDE.local.md", "file-too-large")}
    skipped = next(n for n in loaded.notices if n.code == "file-too-large")
    assert str(tree.ws / "CLAUDE.local.md") in skipped.message


def test_bad_files_are_reported_and_the_rest_loads(tree: Tree) -> None:
    tree.write(tree.top / "CLAUDE.md", b"caf\xe9 latin-1")
    tree.write(tree.ws / "CLAUDE.md", b"bin\x00ary")
    (tree.ws / "CLAUDE.local.md").mkdir()  # a folder where a file should be: not loaded
    tree.write(tree.ws / ".claude" / "CLAUDE.md", "\ufeffgood one\r\nline two")
    rules = tree.ws / ".claude" / "rules"
    rules.mkdir(parents=True)
    os.symlink(rules, rules / "loop")  # a symlink loop among the rules
    tree.write(rules / "ok.md", "rule ok")
    loaded = load_memory(tree.spec())
    assert tree.mine(loaded.files) == [
        "top/ws/.claude/CLAUDE.md",
        "top/ws/.claude/rules/ok.md",
    ]
    assert loaded.files[-2].text == "good one\nline two"
    codes = {(n.path, n.code) for n in loaded.notices}
    assert (tree.top / "CLAUDE.md", "not-utf8") in codes
    assert (tree.ws / "CLAUDE.md", "binary") in codes


def test_overlay_text_wins_over_the_disk(tree: Tree) -> None:
    tree.write(tree.ws / "CLAUDE.md", "saved text")
    unsaved = {tree.ws / "CLAUDE.md": "unsaved editor text", tree.ws / "CLAUDE.local.md": "new"}
    loaded = load_memory(tree.spec(), overlay=unsaved.get)
    assert [f.text for f in loaded.files if tree.base in f.path.parents] == [
        "unsaved editor text",
        "new",
    ]


def test_block_comments_are_stripped_code_comments_kept(tree: Tree) -> None:
    tree.write(
        tree.ws / "CLAUDE.md",
        "keep\n\n<!-- maintainer note\nspanning lines -->\n\n```\n<!-- in code -->\n```\n",
    )
    (file,) = [f for f in load_memory(tree.spec()).files if tree.base in f.path.parents]
    assert "maintainer note" not in file.text
    assert "<!-- in code -->" in file.text


def test_ancestors_exclude_the_root_and_managed_paths_per_platform() -> None:
    assert ancestors_top_down(Path("/a/b")) == (Path("/a"), Path("/a/b"))
    assert managed_memory_path("linux") == Path("/etc/claude-code/CLAUDE.md")
    assert managed_memory_path("darwin") == Path(
        "/Library/Application Support/ClaudeCode/CLAUDE.md"
    )
    assert managed_memory_path("win32") == Path("C:/Program Files/ClaudeCode/CLAUDE.md")
