"""A resumed session whose history is over the Messages API's request size limit (32 MB) stays
usable: the summary request carries only the newest part that fits, the user is told, and the
next request is small. Real sessions, a real transcript on disk, the real SDK against the
scripted Messages-API server."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.agent.env import AgentConfig
from lsp_agent.context.compaction import OMITTED_NOTE
from lsp_agent.model.anthropic import REQUEST_LIMIT_BYTES, AnthropicModel
from lsp_agent.model.types import Message, TextBlock
from lsp_agent.protocol.events import AgentMessageChunk, TextContent
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.manager import SessionManager
from lsp_agent.sessions.resume import resume
from lsp_agent.testing.scenario import ScriptedResponse, reply, scenario
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.tools.registry import ToolRegistry
from tests.unit.agent.conftest import EchoTool, RecordingHost


@dataclass
class Model:
    """Answers a summary request with a summary, anything else with "Going on."; keeps the
    size of every body it got (bytes, as JSON)."""

    sizes: list[int] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)

    def __call__(self, body: Mapping[str, Any]) -> ScriptedResponse:
        text = json.dumps(body)
        self.sizes.append(len(text))
        last = json.dumps(body["messages"][-1])
        words = "Goal: keep going. Pending: none." if "CONTEXT CHECKPOINT" in last else "Going on."
        if "CONTEXT CHECKPOINT" in last:
            self.summaries.append(text)
        response = reply(words).response
        assert response is not None
        return response


def manager_for(server: ScriptedServer, data: Path, host: RecordingHost) -> SessionManager:
    return SessionManager(
        host=host,
        model_factory=lambda: AnthropicModel(api_key="k", base_url=server.base_url, max_retries=0),
        config=AgentConfig(model="claude-test", data_dir=data),
        tools_factory=lambda: ToolRegistry(tools=[EchoTool()]),
        managed_memory=data / "none" / "CLAUDE.md",
    )


async def test_a_resumed_history_over_the_request_limit_is_summarised_from_its_newest_part(
    tmp_path: Path,
) -> None:
    model = Model()
    server = ScriptedServer(scenario=scenario(), responder=model)
    await server.start()
    try:
        first = manager_for(server, tmp_path / "data", RecordingHost())
        session = first.new(cwd=tmp_path)
        chunk = "x" * 100_000
        pairs = [
            (
                Message.user_text(f"part {i} {chunk}"),
                Message(role="assistant", content=(TextBlock(text=f"ok {i} {chunk}"),)),
            )
            for i in range(200)  # about 40 MB of history
        ]
        session.history = tuple(m for pair in pairs for m in pair)
        session._commit(session.history)  # recorded as the loop records it
        await first.aclose()

        host = RecordingHost()
        second = manager_for(server, tmp_path / "data", host)
        resumed = resume(second, session.id).session
        assert len(json.dumps([m.model_dump(mode="json") for m in resumed.history])) > (
            REQUEST_LIMIT_BYTES
        )
        result = await resumed.prompt([PromptText(text="go on")])
        assert result.error is None, result.error
        assert result.final_text == "Going on."
        # The summary request fit, and held the newest part with the omission note.
        assert model.summaries and all(len(s) <= REQUEST_LIMIT_BYTES for s in model.summaries)
        # ... and the model's context window (200k tokens here; the API would answer "prompt
        # is too long" to anything near 32 MB), so it is sent once.
        assert len(model.summaries) == 1 and len(model.summaries[0]) < 1_000_000
        assert OMITTED_NOTE in model.summaries[0] and "part 199 " in model.summaries[0]
        assert "part 0 " not in model.summaries[0]
        assert max(model.sizes[1:]) < 1_000_000  # the turn itself now goes out small
        told = "".join(
            u.content.text
            for u in host.updates
            if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
        )
        assert "too large to summarise whole" in told
        # The next prompt works too (nothing is stuck).
        again = await resumed.prompt([PromptText(text="and then?")])
        assert again.error is None, again.error
        await second.aclose()
    finally:
        await server.stop()
