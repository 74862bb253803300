"""Closing idle sessions in the core, with a small injected interval: real sessions on the
scripted Messages-API server, a real transcript store."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from lsp_agent.context.start import split_start
from lsp_agent.sessions.idle import IdleCloser
from lsp_agent.sessions.resume import saved_sessions
from lsp_agent.testing.scenario import reply, scenario, tool_use
from tests.unit.agent.conftest import HangTool
from tests.unit.store.test_resume import Make, ask, managers  # noqa: F401 (fixture)


async def test_idle_sessions_close_running_ones_stay_and_closed_ones_reopen(
    managers: Make,  # noqa: F811
    tmp_path: Path,
) -> None:
    manager, _, _ = await managers(scenario(reply("A1"), reply(tool_use("Hang", {}, id="toolu_h"))))
    idle = manager.new(cwd=tmp_path)
    await ask(idle, "one")
    busy = manager.new(cwd=tmp_path)
    hang = manager.tools_factory().get("Hang")
    assert isinstance(hang, HangTool)
    running = asyncio.create_task(ask(busy, "wait for me"))
    await asyncio.wait_for(hang.started.wait(), 10)

    closer = IdleCloser(manager=manager, idle_s=1.0)
    manager.get(idle.id)  # a request names it: used now
    assert await closer.sweep() == []
    await asyncio.sleep(1.1)
    before = time.monotonic()
    assert await closer.sweep() == [idle.id]
    assert manager.last_used[busy.id] >= before  # its idle time starts when its turn ends
    assert idle.id not in manager.sessions
    assert busy.id in manager.sessions  # running a prompt: in use
    assert idle.id in {s.session_id for s in saved_sessions(manager)}  # transcript kept

    busy.cancel()
    await running

    reopened = closer.reopen(idle.id)
    assert reopened is not None and reopened is manager.sessions[idle.id]
    history = split_start(reopened.history)[1]  # without the memory start block
    assert [m.text() for m in history] == ["one", "A1"]
    assert closer.reopen(idle.id) is None  # open again: nothing to reopen
    assert closer.reopen("never-seen") is None
