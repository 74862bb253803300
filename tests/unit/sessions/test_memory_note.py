"""``# note`` prompts in a real session (settings store, the real SDK against the scripted
Messages-API server, a disk host): the note is written through the permission engine, the
model is not asked, and the next turn's memory has it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest
from pygit2.enums import ConfigLevel

from lsp_agent.agent.env import AgentConfig
from lsp_agent.config.store import SettingsStore
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.manager import Session, SessionManager
from lsp_agent.sessions.memory_note import note_rule, parse_memory_note, with_bullet
from lsp_agent.testing.scenario import reply, scenario, tool_use
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.tools.registry import default_tools
from lsp_agent.workspace.disk_host import DiskHost


@pytest.fixture(autouse=True)
def _no_developer_git_config(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """libgit2 reads the developer's global and system git config (a global core.excludesFile
    that ignores CLAUDE.local.md would change what these tests see): point it at an empty folder."""
    empty = str(tmp_path_factory.mktemp("gitconfig"))
    levels = (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM)
    saved = {level: pygit2.settings.search_path[level] for level in levels}
    for level in levels:
        pygit2.settings.search_path[level] = empty
    yield
    for level, path in saved.items():
        pygit2.settings.search_path[level] = path


def test_parse_memory_note() -> None:
    assert parse_memory_note("# Always run ruff") == "Always run ruff"
    assert parse_memory_note("  #use tabs\n in Makefiles ") == "use tabs in Makefiles"
    assert parse_memory_note("## A heading") is None
    assert parse_memory_note("#") is None
    assert parse_memory_note("#   ") is None
    assert parse_memory_note("fix #12") is None


def test_with_bullet() -> None:
    assert with_bullet("", "a") == "- a\n"
    assert with_bullet("# Notes", "a") == "# Notes\n- a\n"
    assert with_bullet("# Notes\n", "a") == "# Notes\n- a\n"


@dataclass
class Setup:
    root: Path
    server: ScriptedServer
    session: Session
    asked: list[PermissionRequest]


def _answer(option: str, target: str, asked: list[PermissionRequest]) -> Callable[..., object]:
    """Pick ``target`` when asked which memory file, answer ``option`` to the write."""

    async def answer(request: PermissionRequest) -> PermissionResponse:
        asked.append(request)
        choosing = request.tool_call.tool_call_id.startswith("memory_target_")
        return PermissionResponse(outcome="selected", option_id=target if choosing else option)

    return answer


@pytest.fixture
def make(tmp_path: Path) -> Callable[..., AsyncIterator[Setup]]:
    async def build(
        option: str,
        settings: dict[str, object] | None = None,
        script: Any = None,
        target: str = "project",
        unattended: Any = None,
    ) -> AsyncIterator[Setup]:
        root = (tmp_path / "proj").resolve()
        (root / ".claude").mkdir(parents=True)
        (root / ".claude" / "settings.json").write_text(
            json.dumps({"autoMemoryEnabled": False, **(settings or {})})
        )
        home = tmp_path / "home"
        home.mkdir()
        asked: list[PermissionRequest] = []
        server = ScriptedServer(scenario=script or scenario(reply("ok")))
        base_url = await server.start()
        manager = SessionManager(
            host=DiskHost(permission_handler=_answer(option, target, asked)),  # type: ignore[arg-type]
            model_factory=lambda: AnthropicModel(api_key="k", base_url=base_url, max_retries=0),
            config=AgentConfig(model="claude-test", unattended=unattended),
            tools_factory=default_tools,
            settings=lambda cwd: SettingsStore(
                cwd=cwd, home=home, managed_path=tmp_path / "none.json", trusted=True
            ),
            managed_memory=tmp_path / "no-managed" / "CLAUDE.md",
        )
        try:
            yield Setup(root=root, server=server, session=manager.new(cwd=root), asked=asked)
            await manager.aclose()
        finally:
            await server.stop()

    return build  # type: ignore[return-value]


async def test_note_is_appended_after_approval_and_the_next_turn_sees_it(make: Any) -> None:
    async for s in make("allow_once"):
        (s.root / "CLAUDE.md").write_text("# Project\nUse uv.")
        result = await s.session.prompt([PromptText(text="# Always run ruff before committing")])
        assert result.stop_reason == "end_turn" and result.error is None
        assert "Added to" in result.final_text
        assert (s.root / "CLAUDE.md").read_text() == (
            "# Project\nUse uv.\n- Always run ruff before committing\n"
        )
        choice = s.asked[0]
        assert choice.tool_call.tool_call_id.startswith("memory_target_")
        assert [o.option_id for o in choice.options] == ["project", "local", "user", "cancel"]
        assert choice.tool_call.raw_input["note"] == "Always run ruff before committing"
        assert len(s.asked) == 1  # which file: picking it approved the write
        assert s.server.requests == []  # the model was not asked
        await s.session.prompt([PromptText(text="hello")])
        # The conversation opens with the memory files, the note included.
        opening = json.dumps(s.server.requests[0]["messages"][0]["content"][0])
        assert "Always run ruff before committing" in opening


async def test_an_ask_rule_asks_again_and_a_rejected_note_leaves_the_file_alone(
    make: Any,
) -> None:
    async for s in make("reject_once", {"permissions": {"ask": ["Edit(/CLAUDE.md)"]}}):
        (s.root / "CLAUDE.md").write_text("keep\n")
        result = await s.session.prompt([PromptText(text="# secret plan")])
        assert result.error is not None and "not added" in result.error
        assert (s.root / "CLAUDE.md").read_text() == "keep\n"
        assert len(s.asked) == 2


async def test_deny_rule_refuses_without_asking_and_creates_nothing(make: Any) -> None:
    async for s in make("allow_once", {"permissions": {"deny": ["Edit(/CLAUDE.md)"]}}):
        result = await s.session.prompt([PromptText(text="# note")])
        assert result.error is not None and "not added" in result.error
        assert not (s.root / "CLAUDE.md").exists()
        assert len(s.asked) == 1  # only which file: the write is refused without asking


async def test_note_goes_to_the_local_file_the_user_picks(make: Any) -> None:
    async for s in make("allow_once", target="local"):
        (s.root / "CLAUDE.md").write_text("shared\n")
        result = await s.session.prompt([PromptText(text="# my own shortcut: make t")])
        assert result.error is None, result.error
        assert "project memory (local)" in result.final_text
        assert (s.root / "CLAUDE.local.md").read_text() == "- my own shortcut: make t\n"
        assert (s.root / "CLAUDE.md").read_text() == "shared\n"
        await s.session.prompt([PromptText(text="hello")])
        assert "my own shortcut: make t" in json.dumps(s.server.requests[0])


async def test_a_new_local_file_in_a_git_work_tree_is_added_to_gitignore(make: Any) -> None:
    async for s in make("allow_once", target="local"):
        pygit2.init_repository(str(s.root))
        (s.root / ".gitignore").write_text("*.pyc")
        result = await s.session.prompt([PromptText(text="# my shortcut: make t")])
        assert result.error is None, result.error
        assert (s.root / "CLAUDE.local.md").read_text() == "- my shortcut: make t\n"
        assert (s.root / ".gitignore").read_text() == "*.pyc\nCLAUDE.local.md\n"
        assert "stays out of version control" in result.final_text
        _choice, ignore = s.asked  # the .gitignore edit (not part of the choice) asks
        assert ".gitignore" in json.dumps(ignore.tool_call.raw_input)
        assert pygit2.Repository(str(s.root)).path_is_ignored("CLAUDE.local.md")
        # The file exists now: a second note does not touch .gitignore again.
        await s.session.prompt([PromptText(text="# second")])
        assert (s.root / ".gitignore").read_text() == "*.pyc\nCLAUDE.local.md\n"
        assert len(s.asked) == 3


async def test_gitignore_is_left_alone_when_already_ignored_or_not_a_repository(
    make: Any,
) -> None:
    async for s in make("allow_once", target="local"):
        result = await s.session.prompt([PromptText(text="# not in git")])
        assert result.error is None and not (s.root / ".gitignore").exists()
        assert len(s.asked) == 1
        (s.root / "CLAUDE.local.md").unlink()
        pygit2.init_repository(str(s.root))
        (s.root / ".git" / "info").mkdir(exist_ok=True)
        (s.root / ".git" / "info" / "exclude").write_text("CLAUDE.local.md\n")
        result = await s.session.prompt([PromptText(text="# excluded already")])
        assert result.error is None and not (s.root / ".gitignore").exists()
        assert len(s.asked) == 2


async def test_a_refused_gitignore_edit_keeps_the_note_and_says_so(make: Any) -> None:
    async for s in make(
        "allow_once", {"permissions": {"deny": ["Edit(/.gitignore)"]}}, target="local"
    ):
        pygit2.init_repository(str(s.root))
        result = await s.session.prompt([PromptText(text="# mine")])
        assert result.error is None, result.error
        assert (s.root / "CLAUDE.local.md").read_text() == "- mine\n"
        assert not (s.root / ".gitignore").exists()
        assert "CLAUDE.local.md was not added to" in result.final_text
        assert len(s.asked) == 1  # the deny rule refuses the .gitignore edit without asking


async def test_note_goes_to_the_users_memory_which_always_asks(make: Any, tmp_path: Path) -> None:
    async for s in make(
        "allow_once", {"permissions": {"defaultMode": "acceptEdits"}}, target="user"
    ):
        result = await s.session.prompt([PromptText(text="# I prefer short answers")])
        assert result.error is None, result.error
        user_file = tmp_path / "home" / ".claude" / "CLAUDE.md"
        assert user_file.read_text() == "- I prefer short answers\n"
        assert not (s.root / "CLAUDE.md").exists()
        assert len(s.asked) == 2  # ~/.claude is protected: asked even in acceptEdits


async def test_cancelling_the_choice_writes_nothing_and_asks_nothing_more(make: Any) -> None:
    async for s in make("allow_once", target="cancel"):
        result = await s.session.prompt([PromptText(text="# never mind")])
        assert result.error is None and "not added" in result.final_text
        assert not (s.root / "CLAUDE.md").exists() and not (s.root / "CLAUDE.local.md").exists()
        assert len(s.asked) == 1 and s.server.requests == []


async def test_without_anyone_to_ask_the_note_goes_to_the_project_file(make: Any) -> None:
    from lsp_agent.headless.host import refuse_unattended

    settings = {"permissions": {"allow": ["Edit(/CLAUDE.md)"]}}
    async for s in make("reject_once", settings, unattended=refuse_unattended):
        result = await s.session.prompt([PromptText(text="# from a script")])
        assert result.error is None, result.error
        assert (s.root / "CLAUDE.md").read_text() == "- from a script\n"
        assert s.asked == []


async def test_init_asks_the_model_to_write_claude_md_through_the_write_tool(
    make: Any, tmp_path: Path
) -> None:
    target = (tmp_path / "proj" / "CLAUDE.md").resolve()
    script = scenario(
        reply(tool_use("Write", {"file_path": str(target), "content": "# CLAUDE.md\nRun make.\n"})),
        reply("Wrote CLAUDE.md."),
    )
    async for s in make("allow_once", script=script):
        result = await s.session.prompt([PromptText(text="/init")])
        assert result.stop_reason == "end_turn" and result.final_text == "Wrote CLAUDE.md."
        first = json.dumps(s.server.requests[0]["messages"][-1])
        assert "create a CLAUDE.md file" in first
        assert target.read_text() == "# CLAUDE.md\nRun make.\n"
        assert len(s.asked) == 1  # the file is written through the permission engine
        s.server.assert_done()


def test_the_rule_named_for_a_refused_note_is_one_a_user_can_type() -> None:
    project = Path("/home/dev/project")
    assert note_rule(project / "CLAUDE.md", project) == "Edit(CLAUDE.md)"
    # Outside the folder: the rules' absolute form (//path), not a pattern relative to it.
    home_file = Path("/home/dev/.claude/CLAUDE.md")
    assert note_rule(home_file, project) == "Edit(//home/dev/.claude/CLAUDE.md)"
