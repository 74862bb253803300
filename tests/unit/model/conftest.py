"""Fixtures for the model layer: scripted servers on 127.0.0.1 and clients pointed at them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

import pytest

from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.types import Message, ModelRequest, ModelStreamEvent, ToolSpec
from lsp_agent.testing.scenario import Scenario
from lsp_agent.testing.scripted import ScriptedServer

TEST_KEY = "sk-test-not-a-real-key"

StartServer = Callable[..., Awaitable[ScriptedServer]]
MakeModel = Callable[..., AnthropicModel]


@pytest.fixture
async def serve() -> AsyncIterator[StartServer]:
    """``await serve(scenario, variables=None)`` starts a scripted server, stopped at teardown."""
    servers: list[ScriptedServer] = []

    async def start(
        scenario: Scenario, variables: Mapping[str, str] | None = None
    ) -> ScriptedServer:
        server = ScriptedServer(scenario=scenario, variables=variables)
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


@pytest.fixture
async def make_model() -> AsyncIterator[MakeModel]:
    """``make_model(base_url, max_retries=0)``: an AnthropicModel with a test key, closed at
    teardown. Retries default to 0 so a test opts into the SDK's retry loop explicitly."""
    models: list[AnthropicModel] = []

    def make(base_url: str, *, max_retries: int = 0, timeout_s: float = 30) -> AnthropicModel:
        model = AnthropicModel(
            api_key=TEST_KEY, base_url=base_url, max_retries=max_retries, timeout_s=timeout_s
        )
        models.append(model)
        return model

    yield make
    for model in models:
        await model.aclose()


READ_TOOL = ToolSpec(
    name="Read",
    description="Read a file.",
    input_schema={
        "type": "object",
        "properties": {"file_path": {"type": "string"}},
        "required": ["file_path"],
    },
)
BASH_TOOL = ToolSpec(
    name="Bash",
    description="Run a shell command.",
    input_schema={"type": "object", "properties": {"command": {"type": "string"}}},
)


def simple_request(text: str = "hello", **kwargs: object) -> ModelRequest:
    """A one-message request offering Read and Bash."""
    fields: dict[str, object] = {
        "model": "claude-test",
        "system": ("You are a test.",),
        "messages": (Message.user_text(text),),
        "tools": (READ_TOOL, BASH_TOOL),
    }
    fields.update(kwargs)
    return ModelRequest.model_validate(fields)


async def collect(model: AnthropicModel, request: ModelRequest) -> list[ModelStreamEvent]:
    """Every event of one stream, in order."""
    return [event async for event in model.stream(request)]
