"""Fixtures for the built-in tool tests: a ToolContext over a temporary directory, backed by
a DiskHost (optionally with simulated editor buffers)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.protocol.documents import TextSnapshot
from lsp_agent.tools._proc import Streamed
from lsp_agent.tools.base import Prepared, ReadState, Tool, ToolContext, ToolOutput
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.workspace import Workspace


@dataclass(kw_only=True)
class Env:
    """A session-like setting for calling tools the way the executor does."""

    root: Path
    host: DiskHost
    ctx: ToolContext
    progress: list[str] = field(default_factory=list)

    def path(self, relative: str) -> Path:
        return self.root / relative

    def write_bytes(self, relative: str, data: bytes) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def write_text(self, relative: str, text: str) -> Path:
        return self.write_bytes(relative, text.encode("utf-8"))

    def open_buffer(self, path: Path, text: str, *, version: int = 1) -> None:
        """Simulate the user having ``path`` open in the editor with ``text`` (unsaved)."""
        self.host.buffers[path] = TextSnapshot(
            path=path, text=text, version=version, source="buffer"
        )

    async def prepare(self, tool: Tool[Any, Any], raw: dict[str, Any]) -> Prepared:
        return await tool.prepare(tool.parse(raw), self.ctx)

    async def run(self, tool: Tool[Any, Any], raw: dict[str, Any]) -> ToolOutput:
        """parse → prepare → call, as the executor does after permission was granted."""
        inp = tool.parse(raw)
        prepared = await tool.prepare(inp, self.ctx)
        return await tool.call(inp, prepared, self.ctx)


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    # Resolved: on some systems the temp dir is reached through a symlink, and the tools
    # report resolved paths.
    root = tmp_path.resolve()
    host = DiskHost()
    progress: list[str] = []
    ctx = ToolContext(
        session_id="test-session",
        cwd=root,
        roots=(root,),
        workspace=Workspace(host=host, roots=(root,)),
        read_state=ReadState(),
        progress=progress.append,
    )
    yield Env(root=root, host=host, ctx=ctx, progress=progress)


def record_rg_runs(
    monkeypatch: pytest.MonkeyPatch, module: Any, name: str = "stream_rg"
) -> list[list[str]]:
    """Wrap ``module.name`` (a function running ripgrep) so the arguments of each run are
    kept; the real function still runs. Returns the list the runs are appended to."""
    calls: list[list[str]] = []
    real = getattr(module, name)

    async def recorded(args: Sequence[str], **kwargs: Any) -> Streamed:
        calls.append(list(args))
        result: Streamed = await real(args, **kwargs)
        return result

    monkeypatch.setattr(module, name, recorded)
    return calls
