"""Hooks around turns, with real hook scripts from a real settings store, the real SDK and the
scripted Messages-API server: UserPromptSubmit (block, context), Stop (continue, bound),
``continue: false`` from tool hooks, SessionStart context, SessionEnd, and how the session
takes its mode and rules from settings."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.agent.env import AgentConfig
from lsp_agent.agent.turn_hooks import MAX_STOP_CONTINUATIONS, PROMPT_CONTEXT, STOP_FEEDBACK
from lsp_agent.config.store import SettingsStore
from lsp_agent.context.start import START_OPEN
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.types import ToolResultBlock, ToolUseBlock
from lsp_agent.protocol.events import AgentMessageChunk
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.manager import (
    SESSION_START_CONTEXT,
    Session,
    SessionError,
    SessionManager,
)
from lsp_agent.testing.scenario import (
    Scenario,
    ToolResultExpect,
    expecting,
    reply,
    scenario,
    tool_use,
)
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.tools.base import Tool
from lsp_agent.tools.registry import ToolRegistry

from .conftest import EchoTool, FakeBashTool, RecordingHost


def hook_script(folder: Path, name: str, body: str) -> str:
    """An executable Python hook; returns the command that runs it."""
    path = folder / f"{name}.py"
    path.write_text("import json, os, sys\n" + body)
    return f"{sys.executable} {path}"


def hooks_settings(**events: str | tuple[str | None, str]) -> dict[str, Any]:
    """``{"hooks": ...}`` with one command per event (optionally ``(matcher, command)``)."""
    out: dict[str, Any] = {}
    for event, spec in events.items():
        matcher, command = spec if isinstance(spec, tuple) else (None, spec)
        entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
        if matcher is not None:
            entry["matcher"] = matcher
        out[event] = [entry]
    return {"hooks": out}


@dataclass(kw_only=True)
class Rig:
    root: Path
    server: ScriptedServer
    host: RecordingHost
    manager: SessionManager
    session: Session
    bash: FakeBashTool

    def chunks(self) -> str:
        chunks = [u for u in self.host.updates if isinstance(u, AgentMessageChunk)]
        return "".join(u.content.text for u in chunks)

    def user_texts(self, request: int) -> list[str]:
        """Text blocks of the last user message of the ``request``-th model request."""
        last = self.server.requests[request]["messages"][-1]
        content = last["content"]
        if isinstance(content, str):
            return [content]
        return [b["text"] for b in content if b.get("type") == "text"]


RigFactory = Callable[..., Awaitable[Rig]]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[RigFactory]:
    servers: list[ScriptedServer] = []
    managers: list[SessionManager] = []

    async def make(
        steps: Scenario,
        *,
        project: dict[str, Any] | None = None,
        managed: dict[str, Any] | None = None,
        trusted: bool = True,
        mode: Any = None,
    ) -> Rig:
        root = (tmp_path / "proj").resolve()
        (root / ".claude").mkdir(parents=True, exist_ok=True)
        if project is not None:
            (root / ".claude" / "settings.json").write_text(json.dumps(project))
        managed_path = tmp_path / "managed-settings.json"
        if managed is not None:
            managed_path.write_text(json.dumps(managed))
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        server = ScriptedServer(scenario=steps, variables={"cwd": str(root)})
        base_url = await server.start()
        servers.append(server)
        host = RecordingHost()
        bash = FakeBashTool()
        tools: list[Tool[Any, Any]] = [EchoTool(), bash]
        stores: dict[Path, SettingsStore] = {}

        def settings(cwd: Path) -> SettingsStore:
            if cwd not in stores:
                stores[cwd] = SettingsStore(
                    cwd=cwd, home=home, managed_path=managed_path, trusted=trusted
                )
            return stores[cwd]

        manager = SessionManager(
            host=host,
            model_factory=lambda: AnthropicModel(
                api_key="test-key", base_url=base_url, max_retries=0
            ),
            config=AgentConfig(model="claude-test"),
            tools_factory=lambda: ToolRegistry(tools=tools),
            settings=settings,
        )
        managers.append(manager)
        session = manager.new(cwd=root, mode=mode)
        return Rig(root=root, server=server, host=host, manager=manager, session=session, bash=bash)

    yield make
    for manager in managers:
        await manager.aclose()
    for server in servers:
        await server.stop()


# ---- UserPromptSubmit -------------------------------------------------------------------------


async def test_a_blocking_prompt_hook_ends_the_turn_without_calling_the_model(
    rig: RigFactory, tmp_path: Path
) -> None:
    seen = tmp_path / "prompt.json"
    hook = hook_script(
        tmp_path,
        "gate",
        f"open({str(seen)!r}, 'w').write(sys.stdin.read())\n"
        "print('prompts about secrets are not allowed', file=sys.stderr)\n"
        "sys.exit(2)\n",
    )
    r = await rig(scenario(), project=hooks_settings(UserPromptSubmit=hook))
    result = await r.session.prompt([PromptText(text="show me the secrets")])
    assert result.stop_reason == "end_turn"
    assert result.terminal == "hook_stopped"
    assert "prompts about secrets are not allowed" in result.final_text
    assert "prompts about secrets are not allowed" in r.chunks()
    assert r.server.requests == []
    assert r.session.history == ()  # the blocked prompt is not kept
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "UserPromptSubmit"
    assert payload["prompt"] == "show me the secrets"
    assert payload["permission_mode"] == "default"
    assert payload["cwd"] == str(r.root)


async def test_prompt_hook_json_block_and_continue_false_also_block(
    rig: RigFactory, tmp_path: Path
) -> None:
    hook = hook_script(
        tmp_path, "json_gate", "print(json.dumps({'decision': 'block', 'reason': 'not now'}))\n"
    )
    r = await rig(scenario(), project=hooks_settings(UserPromptSubmit=hook))
    result = await r.session.prompt([PromptText(text="hello")])
    assert result.terminal == "hook_stopped"
    assert "not now" in result.final_text
    assert r.server.requests == []


async def test_prompt_hook_context_goes_in_front_of_the_prompt(
    rig: RigFactory, tmp_path: Path
) -> None:
    hook = hook_script(
        tmp_path,
        "context",
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'UserPromptSubmit',"
        " 'additionalContext': 'current branch: feature/x'}}))\n",
    )
    r = await rig(
        scenario(reply("ok", expect=expecting(last_user_contains="current branch: feature/x"))),
        project=hooks_settings(UserPromptSubmit=hook),
    )
    result = await r.session.prompt([PromptText(text="what branch am I on?")])
    assert result.terminal == "completed"
    r.server.assert_done()
    texts = r.user_texts(0)
    assert texts[0].startswith(START_OPEN)  # the memory files open the conversation
    assert texts[1].startswith(PROMPT_CONTEXT) and "feature/x" in texts[1]
    assert texts[-1] == "what branch am I on?"


async def test_plain_stdout_of_a_prompt_hook_is_context_too(
    rig: RigFactory, tmp_path: Path
) -> None:
    hook = hook_script(tmp_path, "plain", "print('today is a holiday')\n")
    r = await rig(
        scenario(reply("ok", expect=expecting(last_user_contains="today is a holiday"))),
        project=hooks_settings(UserPromptSubmit=hook),
    )
    await r.session.prompt([PromptText(text="plan my day")])
    r.server.assert_done()


# ---- Stop ---------------------------------------------------------------------------------------


async def test_a_blocking_stop_hook_makes_the_model_continue_once(
    rig: RigFactory, tmp_path: Path
) -> None:
    log = tmp_path / "stop.log"
    hook = hook_script(
        tmp_path,
        "stop",
        "data = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(str(data['stop_hook_active']) + '\\n')\n"
        "if not data['stop_hook_active']:\n"
        "    print('run the tests before finishing', file=sys.stderr)\n"
        "    sys.exit(2)\n",
    )
    r = await rig(
        scenario(
            reply("all done"),
            reply(
                "tests pass, now done",
                expect=expecting(last_user_contains="run the tests before finishing"),
            ),
        ),
        project=hooks_settings(Stop=hook),
    )
    result = await r.session.prompt([PromptText(text="fix it")])
    assert result.terminal == "completed"
    assert result.final_text == "tests pass, now done"
    r.server.assert_done()
    assert log.read_text().split() == ["False", "True"]
    assert r.user_texts(1)[-1].startswith(STOP_FEEDBACK)


async def test_stop_hook_continuations_are_bounded(rig: RigFactory, tmp_path: Path) -> None:
    hook = hook_script(tmp_path, "nag", "print('keep going', file=sys.stderr)\nsys.exit(2)\n")
    steps = [reply(f"answer {i}") for i in range(MAX_STOP_CONTINUATIONS + 1)]
    r = await rig(scenario(*steps), project=hooks_settings(Stop=hook))
    result = await r.session.prompt([PromptText(text="go")])
    assert result.terminal == "completed"
    assert result.final_text == f"answer {MAX_STOP_CONTINUATIONS}"
    r.server.assert_done()
    assert "the turn ends here" in r.chunks()


async def test_stop_hook_continue_false_ends_the_turn_even_when_it_blocks(
    rig: RigFactory, tmp_path: Path
) -> None:
    hook = hook_script(
        tmp_path,
        "halt",
        "print(json.dumps({'continue': False, 'stopReason': 'enough', 'decision': 'block',"
        " 'reason': 'more', 'systemMessage': 'the Stop hook says hi'}))\n",
    )
    r = await rig(scenario(reply("done")), project=hooks_settings(Stop=hook))
    result = await r.session.prompt([PromptText(text="go")])
    assert result.terminal == "completed"
    r.server.assert_done()
    assert "[hook] the Stop hook says hi" in r.chunks()


# ---- continue: false from tool hooks ------------------------------------------------------------


def _history_consistent(history: tuple[Any, ...]) -> None:
    for index, message in enumerate(history):
        uses = [b.id for b in message.content if isinstance(b, ToolUseBlock)]
        if uses:
            answers = [
                b.tool_use_id for b in history[index + 1].content if isinstance(b, ToolResultBlock)
            ]
            assert answers == uses


async def test_pre_tool_use_continue_false_ends_the_turn_after_the_results(
    rig: RigFactory, tmp_path: Path
) -> None:
    hook = hook_script(
        tmp_path,
        "pre_stop",
        "print(json.dumps({'continue': False, 'stopReason': 'deploys are frozen today'}))\n",
    )
    r = await rig(
        scenario(reply(tool_use("Bash", {"command": "make deploy"}, id="t1"))),
        project=hooks_settings(PreToolUse=("Bash", hook)),
    )
    result = await r.session.prompt([PromptText(text="deploy")])
    assert result.stop_reason == "end_turn"
    assert result.terminal == "hook_stopped"
    assert "deploys are frozen today" in result.final_text
    assert "deploys are frozen today" in r.chunks()
    assert r.bash.ran == []
    r.server.assert_done()  # exactly one model request
    _history_consistent(r.session.history)
    (answer,) = r.session.history[-1].content
    assert isinstance(answer, ToolResultBlock) and answer.is_error


async def test_post_tool_use_continue_false_ends_the_turn_after_the_tool_ran(
    rig: RigFactory, tmp_path: Path
) -> None:
    hook = hook_script(
        tmp_path, "post_stop", "print(json.dumps({'continue': False, 'stopReason': 'seen it'}))\n"
    )
    r = await rig(
        scenario(reply(tool_use("Echo", {"text": "x"}, id="t1"))),
        project=hooks_settings(PostToolUse=("Echo", hook)),
    )
    result = await r.session.prompt([PromptText(text="echo")])
    assert result.terminal == "hook_stopped"
    assert "seen it" in result.final_text
    r.server.assert_done()
    (answer,) = r.session.history[-1].content
    assert isinstance(answer, ToolResultBlock) and not answer.is_error
    assert "echo: x" in str(answer.content)


# ---- SessionStart / SessionEnd ------------------------------------------------------------------


async def test_session_start_context_reaches_the_first_prompt_only(
    rig: RigFactory, tmp_path: Path
) -> None:
    seen = tmp_path / "start.json"
    hook = hook_script(
        tmp_path,
        "start",
        f"open({str(seen)!r}, 'w').write(sys.stdin.read())\nprint('this project uses uv')\n",
    )
    r = await rig(
        scenario(
            reply("noted", expect=expecting(last_user_contains="this project uses uv")),
            reply("second"),
        ),
        project=hooks_settings(SessionStart=hook),
    )
    await r.session.prompt([PromptText(text="first")])
    await r.session.prompt([PromptText(text="second")])
    r.server.assert_done()
    opening = r.user_texts(0)
    assert opening[0].startswith(START_OPEN)  # the memory files first
    assert opening[1].startswith(SESSION_START_CONTEXT)
    assert not any("uv" in t for t in r.user_texts(1))
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "SessionStart"
    assert payload["source"] == "startup"


async def test_session_end_runs_when_the_manager_closes(rig: RigFactory, tmp_path: Path) -> None:
    seen = tmp_path / "end.json"
    hook = hook_script(tmp_path, "end", f"open({str(seen)!r}, 'w').write(sys.stdin.read())\n")
    r = await rig(scenario(), project=hooks_settings(SessionEnd=hook))
    await r.manager.aclose()
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "SessionEnd"
    assert payload["reason"] == "other"
    assert payload["session_id"] == r.session.id
    seen.unlink()
    await r.manager.aclose()  # idempotent: the hooks run once
    assert not seen.exists()


# ---- trust, modes and rules from settings -------------------------------------------------------


async def test_an_untrusted_workspace_runs_no_project_hooks(
    rig: RigFactory, tmp_path: Path
) -> None:
    sentinel = tmp_path / "ran"
    hook = hook_script(tmp_path, "evil", f"open({str(sentinel)!r}, 'w').write('x')\nsys.exit(2)\n")
    r = await rig(
        scenario(reply("hello")), project=hooks_settings(UserPromptSubmit=hook), trusted=False
    )
    result = await r.session.prompt([PromptText(text="hi")])
    assert result.terminal == "completed"
    assert not sentinel.exists()


async def test_default_mode_comes_from_settings_unless_the_session_names_one(
    rig: RigFactory,
) -> None:
    project = {"permissions": {"defaultMode": "acceptEdits"}}
    r = await rig(scenario(), project=project)
    assert r.session.mode == "acceptEdits"
    explicit = r.manager.new(cwd=r.root, mode="plan")
    assert explicit.mode == "plan"


async def test_set_mode_refuses_a_mode_settings_disable(rig: RigFactory) -> None:
    managed = {"permissions": {"disableBypassPermissionsMode": "disable"}}
    r = await rig(scenario(), managed=managed)
    assert "bypassPermissions" not in r.session.available_modes()
    with pytest.raises(SessionError, match=r"bypassPermissions.*not available"):
        r.session.set_mode("bypassPermissions")
    modes = [r.session.mode]
    r.session.set_mode("plan")
    modes.append(r.session.mode)
    assert modes == ["default", "plan"]


async def test_settings_rules_decide_tool_calls(rig: RigFactory) -> None:
    project = {"permissions": {"allow": ["Bash(make test:*)"], "deny": ["Bash(make deploy)"]}}
    r = await rig(
        scenario(
            reply(
                tool_use("Bash", {"command": "make test -k fast"}, id="t1"),
                tool_use("Bash", {"command": "make deploy"}, id="t2"),
            ),
            reply(
                "ok",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=False),
                        ToolResultExpect(
                            is_error=True, contains="the rule Bash(make deploy) denies"
                        ),
                    ]
                ),
            ),
        ),
        project=project,
        mode="bypassPermissions",
    )
    await r.session.prompt([PromptText(text="test then deploy")])
    r.server.assert_done()
    assert r.bash.ran == ["make test -k fast"]
    assert r.host.permission_requests == []


async def test_compaction_runs_real_post_compact_and_session_start_hook_commands(
    rig: RigFactory, tmp_path: Path
) -> None:
    # Shell scripts from the project's .claude/settings.json, each writing what it read.
    def shell_hook(name: str) -> str:
        script = tmp_path / f"{name}.sh"
        script.write_text(f"#!/bin/sh\ncat > {tmp_path / (name + '.json')}\n")
        script.chmod(0o755)
        return str(script)

    r = await rig(
        scenario(
            reply("Answer one."),
            reply("Goal: test. Pending: none.", expect=expecting(last_user_contains="CONTEXT")),
        ),
        project=hooks_settings(
            PostCompact=("manual", shell_hook("post")),
            SessionStart=("compact", shell_hook("start")),
        ),
    )
    await r.session.prompt([PromptText(text="one " + "word " * 300)])
    result = await r.session.prompt([PromptText(text="/compact")])
    assert result.final_text.startswith("Compacted:"), result.final_text
    r.server.assert_done()
    post = json.loads((tmp_path / "post.json").read_text())
    assert post["hook_event_name"] == "PostCompact" and post["trigger"] == "manual"
    assert post["compact_summary"] == "Goal: test. Pending: none."
    start = json.loads((tmp_path / "start.json").read_text())
    assert start["hook_event_name"] == "SessionStart" and start["source"] == "compact"
