"""The LSP and Rename tools against real basedpyright."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.diagnostics.config import DiagnosticsSettings, VerifyConfig
from lsp_agent.diagnostics.service import DiagnosticsService
from lsp_agent.tools.base import ReadState, Tool, ToolContext, ToolError, ToolOutput
from lsp_agent.tools.lsp_tools import LspTool, RenameTool
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.workspace import Workspace
from tests.unit.diagnostics.conftest import basedpyright_config

MODELS = '''\
class Item:
    def __init__(self, price: float) -> None:
        self.price = price


def total(items: list[Item]) -> float:
    """Sum of the prices."""
    return sum(item.price for item in items)
'''
MAIN = """\
from shop.models import Item, total

print(total([Item(1.0), Item(2.5)]))
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    (root / "shop").mkdir()
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "models.py").write_text(MODELS)
    (root / "shop" / "main.py").write_text(MAIN)
    return root


@pytest.fixture
async def ctx(project: Path) -> AsyncIterator[ToolContext]:
    service = DiagnosticsService(
        # A first basedpyright check of a fresh project can take longer than the interactive
        # default (3 s) on a loaded machine; the wait ends as soon as the server reports.
        settings=DiagnosticsSettings(
            servers=(basedpyright_config(),), verify=VerifyConfig(timeout_ms=60_000)
        ),
        roots=[project],
    )
    yield ToolContext(
        session_id="s",
        cwd=project,
        roots=(project,),
        workspace=Workspace(host=DiskHost(), roots=(project,)),
        read_state=ReadState(),
        diagnostics=service,
    )
    await service.shutdown()


async def run(tool: Tool[Any, Any], ctx: ToolContext, **raw: Any) -> ToolOutput:
    inp = tool.parse(raw)
    prepared = await tool.prepare(inp, ctx)
    return await tool.call(inp, prepared, ctx)


async def test_definition_references_hover_and_symbols(ctx: ToolContext, project: Path) -> None:
    main = str(project / "shop" / "main.py")
    models = str(project / "shop" / "models.py")
    lsp = LspTool()
    out = await run(lsp, ctx, operation="goToDefinition", file_path=main, line=3, symbol="total")
    assert "shop/models.py:6:5: def total(items: list[Item]) -> float:" in out.text
    out = await run(lsp, ctx, operation="findReferences", file_path=models, line=6, character=5)
    assert out.text.startswith("References (3):")
    assert "shop/main.py:1:31: from shop.models import Item, total" in out.text
    out = await run(lsp, ctx, operation="hover", file_path=main, line=3, symbol="total")
    assert "def total(items: list[Item]) -> float" in out.text
    assert "Sum of the prices." in out.text
    out = await run(lsp, ctx, operation="documentSymbol", file_path=models)
    assert "class Item [line 1]" in out.text
    assert "  method __init__ [line 2]" in out.text
    assert "function total [line 6]" in out.text
    out = await run(lsp, ctx, operation="workspaceSymbol", query="total", file_path=models)
    assert "function total" in out.text and "shop/models.py:6" in out.text


async def test_diagnostics_of_the_current_text(ctx: ToolContext, project: Path) -> None:
    bad = project / "bad.py"
    bad.write_text("x: int = 'no'\n")
    out = await run(LspTool(), ctx, operation="diagnostics", file_path=str(bad))
    assert "checked by basedpyright" in out.text
    assert "error bad.py:1:10 [basedpyright reportAssignmentType]" in out.text


async def test_bad_positions_and_missing_servers_are_tool_errors(
    ctx: ToolContext, project: Path
) -> None:
    main = str(project / "shop" / "main.py")
    with pytest.raises(ToolError, match="does not occur on line 3"):
        await run(LspTool(), ctx, operation="hover", file_path=main, line=3, symbol="nothing")
    with pytest.raises(ToolError, match="past the end"):
        await run(LspTool(), ctx, operation="hover", file_path=main, line=99, character=1)
    with pytest.raises(ToolError, match=r"No language server is configured for notes\.txt"):
        (project / "notes.txt").write_text("hi\n")
        await run(LspTool(), ctx, operation="documentSymbol", file_path=str(project / "notes.txt"))


async def test_rename_changes_every_file_exactly(ctx: ToolContext, project: Path) -> None:
    tool = RenameTool()
    inp = tool.parse(
        {
            "file_path": str(project / "shop" / "main.py"),
            "line": 3,
            "symbol": "total",
            "new_name": "grand_total",
        }
    )
    prepared = await tool.prepare(inp, ctx)
    assert sorted(p.name for p in prepared.paths) == ["main.py", "models.py"]
    assert all(item.type == "diff" for item in prepared.content)
    out = await tool.call(inp, prepared, ctx)
    assert "2 file(s)" in out.text
    assert "def grand_total(items" in (project / "shop" / "models.py").read_text()
    assert (project / "shop" / "main.py").read_text() == MAIN.replace("total", "grand_total")
    (project / "shop" / "models.py").write_text(MODELS)
    (project / "shop" / "main.py").write_text(MAIN)


async def test_tools_without_a_service_explain_themselves(project: Path) -> None:
    ctx = ToolContext(
        session_id="s",
        cwd=project,
        roots=(project,),
        workspace=Workspace(host=DiskHost(), roots=(project,)),
        read_state=ReadState(),
    )
    with pytest.raises(ToolError, match="No language servers are configured"):
        await run(
            LspTool(), ctx, operation="documentSymbol", file_path=str(project / "shop" / "main.py")
        )


async def test_a_rename_in_a_turn_is_approved_applied_and_verified(tmp_path: Path) -> None:
    from lsp_agent.agent.env import AgentConfig
    from lsp_agent.diagnostics.config import VerifyConfig
    from lsp_agent.model.anthropic import AnthropicModel
    from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
    from lsp_agent.protocol.prompt import PromptText
    from lsp_agent.sessions.compose import build_sessions
    from lsp_agent.testing.scenario import expecting, reply, scenario, tool_use
    from lsp_agent.testing.scripted import ScriptedServer

    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "models.py").write_text(MODELS)
    (tmp_path / "shop" / "main.py").write_text(MAIN)
    asked: list[PermissionRequest] = []

    async def approve(request: PermissionRequest) -> PermissionResponse:
        asked.append(request)
        return PermissionResponse(outcome="selected", option_id="allow_once")

    script = scenario(
        reply(
            tool_use(
                "Rename",
                {
                    "file_path": "{{cwd}}/shop/main.py",
                    "line": 3,
                    "symbol": "total",
                    "new_name": "grand_total",
                },
                id="rename",
            ),
            expect=expecting(tools_include=["LSP", "Rename"]),
        ),
        reply(
            "Renamed; the type checker reports no new problems.",
            expect=expecting(
                last_user_contains="shop/models.py (disk; checked by basedpyright): no new problems"
            ),
        ),
    )
    service = DiagnosticsService(
        settings=DiagnosticsSettings(servers=(basedpyright_config(),)), roots=[tmp_path]
    )
    async with ScriptedServer(scenario=script, variables={"cwd": str(tmp_path)}) as server:
        manager = build_sessions(
            host=DiskHost(permission_handler=approve),
            model_factory=lambda: AnthropicModel(
                api_key="k", base_url=server.base_url, max_retries=0
            ),
            config=AgentConfig(model="claude-test", verify=VerifyConfig(timeout_ms=30_000)),
            diagnostics=service,
        )
        session = manager.new(cwd=tmp_path)
        try:
            result = await session.prompt([PromptText(text="rename total")])
        finally:
            await service.shutdown()
        assert result.error is None, result.error
        server.assert_done()
    (request,) = asked
    assert request.tool_call.title == "Rename → grand_total in 2 file(s)"
    assert "def grand_total(items" in (tmp_path / "shop" / "models.py").read_text()
    assert "print(grand_total([" in (tmp_path / "shop" / "main.py").read_text()
