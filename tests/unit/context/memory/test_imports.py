"""@imports: relative, ~, absolute, depth, cycles, code, comments, missing, outside approval."""

from __future__ import annotations

from lsp_agent.context.memory.loader import MAX_IMPORT_HOPS, load_memory
from lsp_agent.context.memory.markdown import parse_memory_markdown
from lsp_agent.context.memory.types import Span

from .conftest import Tree


def test_imports_skip_code_spans_fences_html_and_escapes() -> None:
    text = (
        "# Title @head.md\n"
        "See @README and `@code.md`, then @Design\\ Docs/api.md.\n"
        "- item @list/x.md\n"
        "> quote @quoted.md\n"
        "\n"
        "```\n@fenced.md\n```\n"
        "\n"
        "    @indented.md\n"
        "\n"
        "<!-- @comment.md -->\n"
        "text <!-- @inline.md --> mail me@example.com \\@escaped @'quoted'\n"
    )
    parsed = parse_memory_markdown(text)
    assert [(s.target, s.bare) for s in parsed.imports] == [
        ("head.md", "head.md"),
        ("README", "README"),
        ("Design Docs/api.md.", "Design Docs/api.md"),
        ("list/x.md", "list/x.md"),
        ("quoted.md", "quoted.md"),
    ]
    assert parsed.imports[0].span == Span(line=0, start=8, end=16)
    assert parsed.imports[2].span == Span(line=1, start=33, end=54)
    assert parsed.imports[3].span == Span(line=2, start=7, end=17)
    assert "@comment.md" not in parsed.text
    assert "@fenced.md" in parsed.text  # code keeps its text; it just is not an import


def test_relative_to_the_importing_file_from_an_ancestor_launched_below(tree: Tree) -> None:
    tree.write(tree.ws / "CLAUDE.md", "See @docs/guide.md")
    tree.write(tree.ws / "docs" / "guide.md", "guide: @more.md")
    tree.write(tree.ws / "docs" / "more.md", "more")
    sub = tree.ws / "pkg" / "sub"
    sub.mkdir(parents=True)
    loaded = load_memory(tree.spec(cwd=sub))
    assert tree.mine(loaded.files) == [
        "top/ws/docs/more.md",
        "top/ws/docs/guide.md",
        "top/ws/CLAUDE.md",
    ]
    guide = loaded.files[-2]
    assert guide.imported_by == tree.ws / "CLAUDE.md"
    assert guide.depth == 1 and loaded.files[-3].depth == 2
    assert [i.status for i in loaded.imports] == ["ok", "ok"]


def test_home_and_absolute_imports(tree: Tree) -> None:
    absolute = tree.write(tree.home / "abs.md", "absolute")
    tree.write(tree.home / "notes.md", "notes")
    tree.write(tree.home / ".claude" / "CLAUDE.md", f"@~/notes.md and @{absolute}")
    loaded = load_memory(tree.spec())
    assert tree.mine(loaded.files) == ["home/notes.md", "home/abs.md", "home/.claude/CLAUDE.md"]


def test_depth_is_capped_at_four_hops(tree: Tree) -> None:
    tree.write(tree.ws / "CLAUDE.md", "@d1.md")
    for hop in range(1, MAX_IMPORT_HOPS + 2):
        tree.write(tree.ws / f"d{hop}.md", f"hop {hop} @d{hop + 1}.md")
    loaded = load_memory(tree.spec())
    names = tree.mine(loaded.files)
    assert "top/ws/d4.md" in names and "top/ws/d5.md" not in names
    (notice,) = [n for n in loaded.notices if n.code == "import-too-deep"]
    assert notice.path == tree.ws / "d4.md"
    assert notice.span == Span(line=0, start=6, end=12)


def test_cycles_are_cut_with_a_notice(tree: Tree) -> None:
    tree.write(tree.ws / "CLAUDE.md", "@a.md")
    tree.write(tree.ws / "a.md", "a @b.md")
    tree.write(tree.ws / "b.md", "b @a.md and @CLAUDE.md")
    loaded = load_memory(tree.spec())
    assert tree.mine(loaded.files) == ["top/ws/b.md", "top/ws/a.md", "top/ws/CLAUDE.md"]
    cycles = [n for n in loaded.notices if n.code == "import-cycle"]
    assert [n.path for n in cycles] == [tree.ws / "b.md", tree.ws / "b.md"]


def test_missing_and_folder_imports_are_reported(tree: Tree) -> None:
    (tree.ws / "adir").mkdir()
    tree.write(tree.ws / "CLAUDE.md", "@nope.md and @adir\nsee @README.md.")
    tree.write(tree.ws / "README.md", "readme")
    loaded = load_memory(tree.spec())
    assert tree.mine(loaded.files) == ["top/ws/README.md", "top/ws/CLAUDE.md"]
    assert [(n.code, n.span) for n in loaded.notices] == [
        ("missing-import", Span(line=0, start=0, end=8)),
        ("import-is-folder", Span(line=0, start=13, end=18)),
    ]
    assert str(tree.ws / "nope.md") in loaded.notices[0].message


def test_imports_leaving_the_workspace_need_approval(tree: Tree) -> None:
    outside = tree.write(tree.base / "shared" / "team.md", "team rules")
    tree.write(tree.ws / "CLAUDE.md", "@../../shared/team.md")
    asked = load_memory(tree.spec())
    assert tree.mine(asked.files) == ["top/ws/CLAUDE.md"]
    assert [i.status for i in asked.imports] == ["needs-approval"]
    assert asked.notices[0].code == "import-needs-approval"
    approved = load_memory(tree.spec(external_imports="approved"))
    assert tree.mine(approved.files) == ["shared/team.md", "top/ws/CLAUDE.md"]
    declined = load_memory(tree.spec(external_imports="declined"))
    assert [i.status for i in declined.imports] == ["declined"]
    assert outside not in declined.paths()


def test_user_files_import_outside_the_workspace_without_approval(tree: Tree) -> None:
    tree.write(tree.base / "shared" / "team.md", "team rules")
    tree.write(tree.home / ".claude" / "CLAUDE.md", "@../../shared/team.md")
    loaded = load_memory(tree.spec())
    assert tree.mine(loaded.files) == ["shared/team.md", "home/.claude/CLAUDE.md"]


def test_a_symlink_out_of_the_workspace_needs_approval(tree: Tree) -> None:
    target = tree.write(tree.base / "elsewhere.md", "linked in")
    (tree.ws / ".claude" / "rules").mkdir(parents=True)
    (tree.ws / ".claude" / "rules" / "linked.md").symlink_to(target)
    loaded = load_memory(tree.spec())
    assert tree.mine(loaded.files) == []
    assert [n.code for n in loaded.notices] == ["symlink-outside"]
    approved = load_memory(tree.spec(external_imports="approved"))
    assert tree.mine(approved.files) == ["top/ws/.claude/rules/linked.md"]
