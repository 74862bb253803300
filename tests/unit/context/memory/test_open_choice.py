"""``/memory``'s choices on a real temporary tree: files in effect, then the project's and the
user's ``CLAUDE.md`` to create when missing, a missing file marked new."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.context.memory.open_choice import chosen_file, open_choices, open_request
from lsp_agent.context.memory.types import MemoryFile
from lsp_agent.protocol.permissions import PermissionResponse


def _file(path: Path, kind: str = "project") -> MemoryFile:
    return MemoryFile(path=path, kind=kind, text="", chars=0)  # type: ignore[arg-type]


def test_missing_claude_md_files_are_offered_new_after_the_files_in_effect(tmp_path: Path) -> None:
    cwd, home = tmp_path / "proj", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    (cwd / "CLAUDE.local.md").write_text("mine")
    index = home / ".claude" / "projects" / "p" / "memory" / "MEMORY.md"
    files = [_file(cwd / "CLAUDE.local.md", "local"), _file(index, "auto")]
    choices = open_choices(files, cwd=cwd, home=home)
    assert [c.label for c in choices] == [
        "CLAUDE.local.md (local)",
        "~/.claude/projects/p/memory/MEMORY.md (auto memory, new)",
        "CLAUDE.md (project, new)",
        "~/.claude/CLAUDE.md (user, new)",
    ]
    assert [c.exists for c in choices] == [True, False, False, False]
    request = open_request(session_id="s", choices=choices)
    assert [o.option_id for o in request.options][-2:] == ["file-3", "dont_open"]
    picked = chosen_file(PermissionResponse(outcome="selected", option_id="file-2"), choices)
    assert picked is not None and picked.path == cwd / "CLAUDE.md"
    assert chosen_file(PermissionResponse(outcome="selected", option_id="file-4"), choices) is None


def test_existing_files_are_not_offered_as_new(tmp_path: Path) -> None:
    cwd, home = tmp_path / "proj", tmp_path / "home"
    (cwd / ".claude").mkdir(parents=True)
    (home / ".claude").mkdir(parents=True)
    (cwd / ".claude" / "CLAUDE.md").write_text("project")
    (home / ".claude" / "CLAUDE.md").write_text("user")
    # Neither is in effect (an untrusted workspace, say): still nothing to create.
    assert open_choices([], cwd=cwd, home=home) == ()
