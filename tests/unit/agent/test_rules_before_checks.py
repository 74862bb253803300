"""Deny/ask rules and the path sandbox decide before a tool's own checks: a denied path is
refused without revealing whether it exists, is a regular file or was read; when the rules
ask, the user is asked before the model learns why the call could not work."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from lsp_agent.agent.executor import ExecutorEnv, execute_tool_uses
from lsp_agent.model.types import ToolResultBlock, ToolUseBlock
from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.protocol.events import SessionUpdate, ToolCallUpdate
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.tools.base import ReadState, ToolContext
from lsp_agent.tools.lsp_tools import RenameTool
from lsp_agent.tools.registry import ToolRegistry, default_tools
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.workspace import Workspace


class Probe:
    def __init__(self, root: Path, *, mode: str = "default", deny: tuple[str, ...] = ()) -> None:
        self.requests: list[PermissionRequest] = []
        self.updates: list[SessionUpdate] = []

        async def handler(request: PermissionRequest) -> PermissionResponse:
            self.requests.append(request)
            return PermissionResponse(outcome="selected", option_id="reject_once")

        host = DiskHost(permission_handler=handler)
        self.env = ExecutorEnv(
            tools=default_tools(),
            permissions=PermissionEngine(
                mode=mode,  # type: ignore[arg-type]
                roots=(root,),
                home=root,
                disallowed_tools=deny,
            ),
            ctx=ToolContext(
                session_id="s",
                cwd=root,
                roots=(root,),
                workspace=Workspace(host=host, roots=(root,)),
                read_state=ReadState(),
                emit=self.updates.append,
            ),
        )

    async def call(self, name: str, **inp: object) -> ToolResultBlock:
        (result,) = await execute_tool_uses(
            [ToolUseBlock(id="tu", name=name, input=dict(inp))], env=self.env, results={}
        )
        return result

    def refusal(self) -> dict[str, object] | None:
        final = [u for u in self.updates if isinstance(u, ToolCallUpdate) and u.status]
        raw = final[-1].raw_output or {}
        return raw.get("refusal")  # type: ignore[return-value]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = (tmp_path / "proj").resolve()
    r.mkdir()
    return r


async def test_denied_device_path_is_a_denial_not_a_file_type_error(root: Path) -> None:
    probe = Probe(root, mode="bypassPermissions", deny=("Edit(//dev/**)",))
    result = await probe.call("Edit", file_path="/dev/null", old_string="a", new_string="b")
    assert result.is_error and "Permission denied" in str(result.content), result.content
    assert "regular file" not in str(result.content)
    refusal = probe.refusal()
    assert refusal is not None and refusal["kind"] == "denied"


async def test_denied_folder_is_no_existence_oracle(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "there.txt").write_text("x\n")
    deny = (f"Read(/{secret}/**)", f"Edit(/{secret}/**)", f"Write(/{secret}/**)")
    answers = []
    for name in ("there.txt", "missing.txt"):
        probe = Probe(root, mode="bypassPermissions", deny=deny)
        edit = await probe.call(
            "Edit", file_path=str(secret / name), old_string="x", new_string="y"
        )
        write = await probe.call("Write", file_path=str(secret / name), content="y")
        answers.append(
            (str(edit.content).replace(name, "F"), str(write.content).replace(name, "F"))
        )
    assert answers[0] == answers[1], answers
    assert all("Permission denied" in a for pair in answers for a in pair)


async def test_an_asking_sandbox_asks_before_saying_the_file_is_missing(
    root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "missing.txt"
    probe = Probe(root, mode="acceptEdits")
    result = await probe.call("Edit", file_path=str(outside), old_string="a", new_string="b")
    assert len(probe.requests) == 1, "the user is asked first"
    assert "does not exist" not in str(result.content) and result.is_error
    (outside.parent).mkdir()
    probe = Probe(root, mode="acceptEdits")
    result = await probe.call("Glob", pattern="*", path=str(outside.parent / "nope"))
    assert len(probe.requests) == 1 and "not a directory" not in str(result.content)
    result = await Probe(root, mode="acceptEdits").call("Grep", pattern="x", path=str(outside))
    assert "does not exist" not in str(result.content)


async def test_edit_deny_rules_cover_rename_before_the_language_server_is_asked(
    root: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret"
    probe = Probe(root, mode="bypassPermissions", deny=(f"Edit(/{secret}/**)",))
    probe.env = dataclasses.replace(probe.env, tools=ToolRegistry(tools=[RenameTool()]))
    result = await probe.call(
        "Rename", file_path=str(secret / "m.py"), line=1, character=1, new_name="y"
    )
    assert result.is_error and "Permission denied" in str(result.content), result.content


async def test_read_through_a_link_is_decided_on_the_file_it_opens(root: Path) -> None:
    # Read resolves its path once, in prepare; the engine decides on that very path.
    (root / "secret").mkdir()
    (root / "secret" / "key.txt").write_text("k\n")
    (root / "link.txt").symlink_to(root / "secret" / "key.txt")
    denied = Probe(root, deny=(f"Read(/{root}/secret/**)",))
    result = await denied.call("Read", file_path=str(root / "link.txt"))
    assert result.is_error and "Permission denied" in str(result.content), result.content
    refusal = denied.refusal()
    assert refusal is not None and refusal["kind"] == "denied"
    allowed = Probe(root)
    assert (await allowed.call("Read", file_path=str(root / "link.txt"))).content == "1\tk"


async def test_edit_through_a_link_is_decided_on_the_file_it_writes(root: Path) -> None:
    (root / "secret").mkdir()
    (root / "secret" / "key.txt").write_text("k\n")
    (root / "link.txt").symlink_to(root / "secret" / "key.txt")
    probe = Probe(root, mode="bypassPermissions", deny=(f"Edit(/{root}/secret/**)",))
    result = await probe.call(
        "Edit", file_path=str(root / "link.txt"), old_string="k", new_string="x"
    )
    assert result.is_error and "Permission denied" in str(result.content), result.content
    assert (root / "secret" / "key.txt").read_text() == "k\n"
    # A link to a protected file asks in every mode, bypassPermissions included.
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "cfg").symlink_to(root / ".git" / "config")
    asked = Probe(root, mode="bypassPermissions")
    result = await asked.call("Write", file_path=str(root / "cfg"), content="x")
    assert result.is_error, result.content
    assert asked.requests, "the protected target was not asked about"
    assert (root / ".git" / "config").read_text() == "[core]\n"
