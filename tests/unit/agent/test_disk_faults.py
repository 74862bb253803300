"""Faults between the agent's edits and the disk: a read-only (0444) file is not replaced
unless the user approves changing its mode, and a disk-reading tool never runs on a disk that
could not be given the agent's edits (the model and the user are told instead)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from lsp_agent.agent.executor import ExecutorEnv, execute_tool_uses
from lsp_agent.model.types import ToolResultBlock, ToolUseBlock
from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.protocol.documents import TextSnapshot
from lsp_agent.protocol.events import SessionUpdate, ToolCallUpdate
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.tools.base import ReadState, ToolContext
from lsp_agent.tools.registry import default_tools
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.textfile import write_text_atomic
from lsp_agent.workspace.workspace import Workspace


class Agent:
    def __init__(
        self,
        root: Path,
        *,
        mode: str = "bypassPermissions",
        answer: str = "reject_once",
        buffers: dict[Path, TextSnapshot] | None = None,
    ) -> None:
        self.requests: list[PermissionRequest] = []
        self.updates: list[SessionUpdate] = []

        async def handler(request: PermissionRequest) -> PermissionResponse:
            self.requests.append(request)
            return PermissionResponse(outcome="selected", option_id=answer)

        self.host = DiskHost(permission_handler=handler, buffers=buffers or {})
        self.env = ExecutorEnv(
            tools=default_tools(),
            permissions=PermissionEngine(mode=mode, roots=(root,), home=root),  # type: ignore[arg-type]
            ctx=ToolContext(
                session_id="s",
                cwd=root,
                roots=(root,),
                workspace=Workspace(host=self.host, roots=(root,)),
                read_state=ReadState(),
                emit=self.updates.append,
            ),
        )

    async def call(self, name: str, **inp: object) -> ToolResultBlock:
        (result,) = await execute_tool_uses(
            [ToolUseBlock(id=f"tu-{name}", name=name, input=dict(inp))], env=self.env, results={}
        )
        return result


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = (tmp_path / "proj").resolve()
    r.mkdir()
    return r


def read_only_file(root: Path) -> Path:
    path = root / "ro.py"
    path.write_text("value = 0\n")
    path.chmod(0o444)
    return path


@pytest.mark.parametrize("tool", ["Edit", "Write"])
async def test_a_read_only_file_asks_even_in_bypass_and_a_no_leaves_it(
    root: Path, tool: str
) -> None:
    path = read_only_file(root)
    agent = Agent(root, answer="reject_once")
    assert not (await agent.call("Read", file_path=str(path))).is_error
    if tool == "Edit":
        result = await agent.call("Edit", file_path=str(path), old_string="0", new_string="1")
    else:
        result = await agent.call("Write", file_path=str(path), content="value = 1\n")
    assert result.is_error
    (request,) = agent.requests
    assert "read-only (mode 0444)" in (request.reason or "")
    assert path.read_text() == "value = 0\n" and stat.S_IMODE(path.stat().st_mode) == 0o444


async def test_an_approved_mode_change_makes_the_file_writable_then_edits_it(root: Path) -> None:
    path = read_only_file(root)
    agent = Agent(root, answer="allow_once")
    await agent.call("Read", file_path=str(path))
    result = await agent.call("Edit", file_path=str(path), old_string="0", new_string="1")
    assert not result.is_error, result.content
    assert path.read_text() == "value = 1\n" and stat.S_IMODE(path.stat().st_mode) == 0o644


def test_the_atomic_write_refuses_a_read_only_file(root: Path) -> None:
    path = read_only_file(root)
    with pytest.raises(PermissionError, match="read-only"):
        write_text_atomic(path, "value = 2\n")
    assert path.read_text() == "value = 0\n"


async def test_bash_does_not_run_when_an_edited_buffer_cannot_be_saved(root: Path) -> None:
    path = root / "m.py"
    path.write_text("value = 0\n")
    buffer = TextSnapshot(path=path, text="value = 0\n", version=1, source="buffer")
    agent = Agent(root, buffers={path: buffer})
    await agent.call("Read", file_path=str(path))
    edit = await agent.call("Edit", file_path=str(path), old_string="0", new_string="1")
    assert not edit.is_error and agent.host.buffers[path].text == "value = 1\n"
    path.chmod(0o444)  # the save will fail (as on a read-only mount or a full disk)
    marker = root / "ran"
    result = await agent.call("Bash", command=f"cat m.py > {marker}")
    assert result.is_error and not marker.exists()
    text = str(result.content)
    assert "could not be saved" in text and str(path) in text and "old text" in text
    final = [u for u in agent.updates if isinstance(u, ToolCallUpdate) and u.status == "failed"]
    assert any("could not be saved" in str(u.content) for u in final), "the user sees it too"
    # Once the disk can take the edit again, the next command runs on the saved text.
    path.chmod(0o644)
    result = await agent.call("Bash", command=f"cat m.py > {marker}")
    assert not result.is_error and marker.read_text() == "value = 1\n"
