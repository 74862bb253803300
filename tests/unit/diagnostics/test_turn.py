"""Verification inside real agent turns: scripted model (real SDK), real tools, real ruff."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.agent.env import AgentConfig
from lsp_agent.diagnostics.config import DiagnosticsSettings, VerifyConfig
from lsp_agent.diagnostics.service import DiagnosticsService
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.protocol.events import SessionUpdate, ToolCall, ToolCallUpdate
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.compose import build_sessions
from lsp_agent.sessions.manager import Session
from lsp_agent.testing.scenario import Scenario, expecting, reply, scenario, tool_use
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.workspace.disk_host import DiskHost

from .conftest import ruff_config

BROKEN = "def total(items):\n    return sum(item.price for item in itemz)\n"
ORIGINAL = "def total(items):\n    return sum(item.price for item in items)\n"


@dataclass(kw_only=True)
class Run:
    session: Session
    server: ScriptedServer
    updates: list[SessionUpdate]
    service: DiagnosticsService

    def verdicts(self) -> list[dict[str, Any]]:
        return [
            u.raw_output["verification"]
            for u in self.updates
            if isinstance(u, ToolCallUpdate) and u.raw_output and "verification" in u.raw_output
        ]


RunFactory = Callable[..., Awaitable[Run]]


@pytest.fixture
async def run_turn(tmp_path: Path) -> AsyncIterator[RunFactory]:
    cleanups: list[Any] = []

    async def make(script: Scenario, *, verify: VerifyConfig, servers: Any = None) -> Run:
        (tmp_path / "shop.py").write_text(
            "def total(items):\n    return sum(item.price for item in items)\n"
        )
        server = ScriptedServer(scenario=script, variables={"cwd": str(tmp_path)})
        base_url = await server.start()
        updates: list[SessionUpdate] = []
        service = DiagnosticsService(
            settings=DiagnosticsSettings(servers=servers or (ruff_config(),)), roots=[tmp_path]
        )
        cleanups.append(server.stop)
        cleanups.append(service.shutdown)
        manager = build_sessions(
            host=DiskHost(on_update=lambda _sid, update: updates.append(update)),
            model_factory=lambda: AnthropicModel(api_key="k", base_url=base_url, max_retries=0),
            config=AgentConfig(model="claude-test", permission_mode="acceptEdits", verify=verify),
            diagnostics=service,
        )
        return Run(
            session=manager.new(cwd=tmp_path), server=server, updates=updates, service=service
        )

    yield make
    for cleanup in reversed(cleanups):
        await cleanup()


def read_step() -> Any:
    return reply(tool_use("Read", {"file_path": "{{cwd}}/shop.py"}, id="r1"))


def edit(old: str, new: str, id: str, **expect: Any) -> Any:
    return reply(
        tool_use(
            "Edit", {"file_path": "{{cwd}}/shop.py", "old_string": old, "new_string": new}, id=id
        ),
        expect=expecting(**expect) if expect else None,
    )


async def test_error_reported_as_new_then_fixed_then_clean(run_turn: RunFactory) -> None:
    run = await run_turn(
        scenario(
            read_step(),
            edit("in items)", "in itemz)", "e1"),
            edit(
                "in itemz)",
                "in items)",
                "e2",
                last_user_contains="NEW error shop.py:2:",
            ),
            reply(
                "Fixed; ruff reports no new problems for the version I wrote.",
                expect=expecting(last_user_contains="fixed: Ruff F821"),
            ),
        ),
        verify=VerifyConfig(mode="report", timeout_ms=10_000),
    )
    result = await run.session.prompt([PromptText(text="break it and fix it")])
    assert result.stop_reason == "end_turn"
    run.server.assert_done()
    first, second = run.verdicts()
    assert first["newErrors"] == 1 and first["complete"]
    (file,) = first["files"]
    assert file["new"][0]["code"] == "F821" and file["new"][0]["line"] == 2
    assert second["newErrors"] == 0 and second["complete"]
    assert [f["code"] for f in second["files"][0]["fixed"]] == ["F821"]
    # The attachment went to the model in the same user message as the tool result.
    messages = run.session.history
    attached = [
        m for m in messages if m.role == "user" and "<diagnostics-after-edit>" in str(m.content)
    ]
    assert len(attached) == 2
    started = [
        u for u in run.updates if isinstance(u, ToolCall) and u.tool_call_id.startswith("verify_")
    ]
    assert len(started) == 2 and all(u.kind == "think" for u in started)
    # People get the one-line verdict as the title; the model's text is never the content.
    finished = [
        u
        for u in run.updates
        if isinstance(u, ToolCallUpdate) and u.tool_call_id.startswith("verify_")
    ]
    assert [u.title for u in finished] == [
        "Diagnostics: 1 new error in shop.py",
        "Diagnostics: no new problems in shop.py",
    ]
    assert all(not u.content for u in finished)


async def test_fix_mode_nudges_once_when_the_turn_ends_with_new_errors(
    run_turn: RunFactory,
) -> None:
    run = await run_turn(
        scenario(
            read_step(),
            edit("in items)", "in itemz)", "e1"),
            reply("All done, tests pass."),
            edit(
                "in itemz)",
                "in items)",
                "e2",
                last_user_contains="Before you finish: your edits left new errors",
            ),
            reply(
                "Fixed the undefined name.", expect=expecting(last_user_contains="fixed: Ruff F821")
            ),
        ),
        verify=VerifyConfig(mode="fix", timeout_ms=10_000, max_rounds=1),
    )
    result = await run.session.prompt([PromptText(text="edit")])
    assert result.stop_reason == "end_turn"
    assert result.final_text == "Fixed the undefined name."
    run.server.assert_done()


async def test_fix_mode_stops_nudging_after_max_rounds(run_turn: RunFactory) -> None:
    run = await run_turn(
        scenario(
            read_step(),
            edit("in items)", "in itemz)", "e1"),
            reply("Done."),
            reply("I will leave it.", expect=expecting(last_user_contains="Before you finish")),
        ),
        verify=VerifyConfig(mode="fix", timeout_ms=10_000, max_rounds=1),
    )
    result = await run.session.prompt([PromptText(text="edit")])
    assert result.final_text == "I will leave it."
    run.server.assert_done()


async def test_report_mode_does_not_nudge(run_turn: RunFactory) -> None:
    run = await run_turn(
        scenario(read_step(), edit("in items)", "in itemz)", "e1"), reply("Done.")),
        verify=VerifyConfig(mode="report", timeout_ms=10_000),
    )
    result = await run.session.prompt([PromptText(text="edit")])
    assert result.final_text == "Done."
    run.server.assert_done()


async def test_off_mode_attaches_nothing(run_turn: RunFactory) -> None:
    run = await run_turn(
        scenario(read_step(), edit("in items)", "in itemz)", "e1"), reply("Done.")),
        verify=VerifyConfig(mode="off"),
    )
    await run.session.prompt([PromptText(text="edit")])
    assert run.verdicts() == []
    assert all("<diagnostics-after-edit>" not in str(m.content) for m in run.session.history)
    run.server.assert_done()


async def test_a_source_that_cannot_start_is_reported_unknown_to_the_model(
    run_turn: RunFactory,
) -> None:
    broken = ruff_config().model_copy(update={"command": ("no-such-ruff-xyz", "server")})
    run = await run_turn(
        scenario(
            read_step(),
            edit("in items)", "in itemz)", "e1"),
            reply(
                "I could not verify.",
                expect=expecting(
                    last_user_contains="unknown: ruff could not start: command not found: no-such"
                ),
            ),
        ),
        verify=VerifyConfig(mode="fix", timeout_ms=2000),
        servers=(broken,),
    )
    result = await run.session.prompt([PromptText(text="edit")])
    assert result.error is None, (result.error, run.server.failures)
    assert result.final_text == "I could not verify."
    (verdict, *_rest) = run.verdicts()
    assert verdict["complete"] is False
    # The end-of-turn re-check updates the card of the check it repeats: one card.
    verify_ids = {
        u.tool_call_id
        for u in run.updates
        if isinstance(u, ToolCall | ToolCallUpdate) and u.tool_call_id.startswith("verify_")
    }
    assert len(verify_ids) == 1
    assert len(run.verdicts()) == 2
    run.server.assert_done()


async def test_fix_mode_per_edit_reports_stop_asking_after_max_rounds(run_turn: RunFactory) -> None:
    # A model that "fixes" whatever each report lists, against errors that never settle: each
    # fix introduces another undefined name. Before, every report listed the new error again
    # and the turn never ended; now the third report says the rounds are spent.
    run = await run_turn(
        scenario(
            read_step(),
            edit("in items)", "in itemz)", "e1"),
            edit("in itemz)", "in itemy)", "e2", last_user_contains="NEW error shop.py:2:"),
            edit("in itemy)", "in itemx)", "e3", last_user_contains="NEW error shop.py:2:"),
            reply(
                "I stop here; itemx is still undefined.",
                expect=expecting(last_user_contains="after 1 fix round(s); that is the limit"),
            ),
        ),
        verify=VerifyConfig(mode="fix", timeout_ms=10_000, max_rounds=1),
    )
    result = await run.session.prompt([PromptText(text="edit")])
    assert result.stop_reason == "end_turn"
    assert result.final_text == "I stop here; itemx is still undefined."
    run.server.assert_done()  # no end-of-turn nudge: the budget is shared
    last_user = str(run.session.history[-2].content)
    assert "NEW error" not in last_user
    notices = [u for u in run.updates if isinstance(u, ToolCall) and "Still failing" in u.title]
    assert len(notices) == 1 and "after 1 fix round(s)" in notices[0].title


async def test_a_diagnostic_an_edit_did_not_change_is_not_listed_again(
    run_turn: RunFactory,
) -> None:
    run = await run_turn(
        scenario(
            read_step(),
            edit("in items)", "in itemz)", "e1"),
            edit(
                "def total(items):",
                "def total(items):  # sum of prices",
                "e2",
                last_user_contains="NEW error shop.py:2:",
            ),
            reply(
                "Done.",
                expect=expecting(last_user_contains="reported before and not changed by this edit"),
            ),
        ),
        verify=VerifyConfig(mode="report", timeout_ms=10_000),
    )
    await run.session.prompt([PromptText(text="edit")])
    run.server.assert_done()
    assert "NEW error" not in str(run.session.history[-2].content)
