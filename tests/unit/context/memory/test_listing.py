"""``/memory``'s listing over a real load of a temporary tree with every kind of file."""

from __future__ import annotations

from lsp_agent.context.memory.listing import memory_listing, shown_path
from lsp_agent.context.memory.loader import load_memory

from .conftest import Tree


def test_lists_every_file_in_effect_with_scope_tokens_and_imports(tree: Tree) -> None:
    tree.write(tree.managed, "org policy\n")
    tree.write(tree.home / ".claude" / "CLAUDE.md", "my prefs\n")
    tree.write(tree.ws / "CLAUDE.md", "project notes @docs/guide.md and @gone.md\n")
    tree.write(tree.ws / "docs" / "guide.md", "guide " * 100)
    tree.write(tree.ws / "CLAUDE.local.md", "local notes\n")
    tree.write(tree.ws / ".claude" / "rules" / "style.md", "always rule\n")
    tree.write(
        tree.ws / ".claude" / "rules" / "py.md", "---\npaths: ['**/*.py']\n---\npython rule\n"
    )
    loaded = load_memory(tree.spec())
    text = memory_listing(loaded, cwd=tree.ws, home=tree.home)
    rows = {
        line.split(" | ")[0].strip("| `"): line.split(" | ")[1:]
        for line in text.splitlines()
        if line.startswith("| `")
    }
    assert rows[str(tree.managed)][0] == "managed"
    assert rows["~/.claude/CLAUDE.md"][0] == "user"
    assert rows["CLAUDE.md"][0] == "project"
    assert rows["CLAUDE.md"][2] == "`docs/guide.md`, `gone.md` (missing) |"
    assert rows["docs/guide.md"][0] == "project, imported by `CLAUDE.md`"
    assert int(rows["docs/guide.md"][1].replace(",", "")) > 100
    assert rows["CLAUDE.local.md"][0] == "local"
    assert rows[".claude/rules/style.md"][0] == "project rule"
    assert ".claude/rules/py.md" not in rows  # waits for a matching file
    assert "- `.claude/rules/py.md` for `**/*.py`" in text
    assert "**Notices**" in text and "gone.md" in text.split("**Notices**")[1]
    assert text.startswith(f"**Memory files in effect** ({len(rows)}, about ")


def test_no_files_says_how_to_add_one(tree: Tree) -> None:
    text = memory_listing(load_memory(tree.spec()), cwd=tree.ws, home=tree.home)
    assert text.startswith("No memory files are loaded") and "`#`" in text


def test_untrusted_workspace_lists_only_the_users_own_files(tree: Tree) -> None:
    tree.write(tree.home / ".claude" / "CLAUDE.md", "my prefs\n")
    tree.write(tree.ws / "CLAUDE.md", "project notes\n")
    text = memory_listing(load_memory(tree.spec(trusted=False)), cwd=tree.ws, home=tree.home)
    assert "`~/.claude/CLAUDE.md`" in text and "| `CLAUDE.md`" not in text


def test_shown_path(tree: Tree) -> None:
    assert shown_path(tree.ws / "a" / "b.md", cwd=tree.ws, home=tree.home) == "a/b.md"
    assert shown_path(tree.home / "x.md", cwd=tree.ws, home=tree.home) == "~/x.md"
    assert shown_path(tree.base / "y.md", cwd=tree.ws, home=tree.home) == str(tree.base / "y.md")


def test_the_auto_memory_index_is_new_until_something_is_saved(tree: Tree) -> None:
    index = tree.home / ".claude" / "projects" / "p" / "memory" / "MEMORY.md"
    before = memory_listing(load_memory(tree.spec(auto_memory=index)), cwd=tree.ws, home=tree.home)
    assert "| `~/.claude/projects/p/memory/MEMORY.md` | auto memory, new |" in before
    tree.write(index, "- a note\n")
    after = memory_listing(load_memory(tree.spec(auto_memory=index)), cwd=tree.ws, home=tree.home)
    assert "| `~/.claude/projects/p/memory/MEMORY.md` | auto memory |" in after
