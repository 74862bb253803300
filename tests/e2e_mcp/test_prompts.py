"""MCP prompts as slash commands against a real SDK server: naming, argument binding, the
prompt's text, and commands that appear with prompts/list_changed."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.mcp.prompts import PromptArgumentsError, PromptCommand, bind_arguments
from lsp_agent.mcp.service import McpError, McpService
from lsp_agent.mcp.sources import McpSources
from tests.e2e_mcp.conftest import START_WAIT_S, stdio_entry
from tests.e2e_mcp.conftest import test_limits as fast_limits
from tests.e2e_mcp.test_pool import by_name, call

REVIEW = PromptCommand(
    name="mcp__fx__review",
    server="fx",
    prompt="review",
    description="Review (MCP)",
    arguments=(("path", True), ("focus", False)),
)


def test_arguments_bind_in_declared_order() -> None:
    assert bind_arguments(REVIEW, "a.py") == {"path": "a.py"}
    assert bind_arguments(REVIEW, '"my file.py" speed') == {"path": "my file.py", "focus": "speed"}
    # Words beyond the last argument join it.
    assert bind_arguments(REVIEW, "a.py memory leaks") == {"path": "a.py", "focus": "memory leaks"}
    assert REVIEW.hint == "path [focus]"
    with pytest.raises(PromptArgumentsError, match=r"missing path\. Usage: /mcp__fx__review"):
        bind_arguments(REVIEW, "")
    with pytest.raises(PromptArgumentsError, match="cannot split"):
        bind_arguments(REVIEW, '"open')
    bare = PromptCommand(
        name="mcp__fx__later", server="fx", prompt="later", description="", arguments=()
    )
    assert bind_arguments(bare, "") == {}
    with pytest.raises(PromptArgumentsError, match="takes no arguments"):
        bind_arguments(bare, "x")


@pytest.fixture
async def service(tmp_path: Path) -> Any:
    sources = McpSources(
        cwd=tmp_path,
        home=tmp_path,
        trusted=True,
        environ=dict(os.environ),
        settings_files={},
        cli_configs=(json.dumps({"mcpServers": {"fx": stdio_entry()}}),),
    )
    svc = McpService(sources=sources, limits=fast_limits())
    yield svc
    await svc.aclose()


async def test_prompts_become_commands_and_follow_list_changed(service: McpService) -> None:
    changes: list[int] = []
    service.listeners.append(lambda: changes.append(1) is None)
    tools = await service.tools()
    (review,) = [c for c in service.prompt_commands() if c.prompt == "review"]
    assert (review.name, review.hint) == ("mcp__fx__review", "path [focus]")
    assert review.description == "Review a file with a given focus. (MCP)"
    text = await service.run_prompt(review, "src/app.py security")
    assert text == "Please review src/app.py, looking for security."
    with pytest.raises(McpError, match="missing path"):
        await service.run_prompt(review, "")
    assert changes  # listeners hear about servers starting
    assert "mcp__fx__later" not in {c.name for c in service.prompt_commands()}
    await call(by_name(tools, "mcp__fx__add_prompt"), {})
    for _ in range(int(START_WAIT_S * 20)):
        if "mcp__fx__later" in {c.name for c in service.prompt_commands()}:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("prompts/list_changed did not add the prompt")
    later = next(c for c in service.prompt_commands() if c.name == "mcp__fx__later")
    assert await service.run_prompt(later, "") == "A later prompt."
