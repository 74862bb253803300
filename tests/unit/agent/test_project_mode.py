"""A repository cannot switch off permission prompts by itself: a project-supplied
``bypassPermissions`` (or ``acceptEdits`` reaching outside the project) starts the session in
``default`` and is used only after the user confirms it, naming the file; the confirmation is
remembered per file content."""

# ruff: noqa: F811 (test arguments named after the imported ``rig`` fixture)
from __future__ import annotations

import json

from lsp_agent.protocol.events import CurrentModeUpdate
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.testing.scenario import reply, scenario
from tests.unit.agent.test_hooks_loop import RigFactory, rig  # noqa: F401 (the fixture)

BYPASS = {"permissions": {"defaultMode": "bypassPermissions"}}


def answering(option: str, asked: list[PermissionRequest]):  # type: ignore[no-untyped-def]
    async def answer(request: PermissionRequest) -> PermissionResponse:
        asked.append(request)
        return PermissionResponse(outcome="selected", option_id=option)

    return answer


async def test_declining_keeps_default_mode(rig: RigFactory) -> None:
    r = await rig(scenario(reply("hi")), project=BYPASS)
    assert r.session.mode == "default"  # before, the session started in bypassPermissions
    asked: list[PermissionRequest] = []
    r.host.answer = answering("reject_once", asked)
    await r.session.prompt([PromptText(text="hello")])
    (request,) = asked
    settings = r.root / ".claude" / "settings.json"
    assert (
        str(settings) in request.tool_call.title and "bypassPermissions" in request.tool_call.title
    )
    assert str(settings) in request.reason
    assert r.session.mode == "default"
    assert not any(isinstance(u, CurrentModeUpdate) for u in r.host.updates)


async def test_confirming_switches_and_is_remembered_per_content(rig: RigFactory) -> None:
    r = await rig(scenario(reply("one"), reply("two")), project=BYPASS)
    asked: list[PermissionRequest] = []
    r.host.answer = answering("allow_once", asked)
    await r.session.prompt([PromptText(text="first")])
    assert r.session.mode == "bypassPermissions" and len(asked) == 1
    assert any(
        isinstance(u, CurrentModeUpdate) and u.current_mode_id == "bypassPermissions"
        for u in r.host.updates
    )
    again = r.manager.new(cwd=r.root)
    assert again.mode == "bypassPermissions" and again.pending_mode is None
    # A changed file asks again.
    settings = r.root / ".claude" / "settings.json"
    settings.write_text(json.dumps({**BYPASS, "env": {"X": "1"}}))
    r.manager.settings(r.root).reload()  # type: ignore[misc]
    changed = r.manager.new(cwd=r.root)
    assert changed.mode == "default" and changed.pending_mode is not None


async def test_modes_that_need_no_confirmation(rig: RigFactory) -> None:
    r = await rig(scenario(), project={"permissions": {"defaultMode": "acceptEdits"}})
    assert r.session.mode == "acceptEdits" and r.session.pending_mode is None
    r = await rig(scenario(), project=BYPASS, mode="bypassPermissions")  # the user chose it
    assert r.session.mode == "bypassPermissions" and r.session.pending_mode is None


async def test_accept_edits_reaching_outside_the_project_needs_confirmation(
    rig: RigFactory,
) -> None:
    project = {"permissions": {"defaultMode": "acceptEdits", "additionalDirectories": ["/"]}}
    r = await rig(scenario(), project=project)
    assert r.session.mode == "default"
    assert r.session.pending_mode is not None and r.session.pending_mode.mode == "acceptEdits"
