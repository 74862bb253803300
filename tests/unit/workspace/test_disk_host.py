"""DiskHost: the editor-less Host, with optional simulated buffers."""

from __future__ import annotations

import codecs
from pathlib import Path

from lsp_agent.protocol.documents import FileChange, TextSnapshot
from lsp_agent.protocol.events import AgentMessageChunk, SessionUpdate, TextContent, ToolCall
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.workspace.disk_host import DiskHost
from lsp_agent.workspace.textfile import read_text_file
from lsp_agent.workspace.workspace import Workspace


def request() -> PermissionRequest:
    return PermissionRequest(tool_call=ToolCall(tool_call_id="t1", title="Bash rm -rf build"))


async def test_applies_changes_to_disk_keeping_encoding(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(codecs.BOM_UTF8 + b"old\r\n")
    base = read_text_file(path)
    host = DiskHost()
    result = await host.apply_changes(
        [FileChange(path=path, base=base, new_text="new\r\n")], label="t"
    )
    assert result.applied and result.failure is None
    assert path.read_bytes() == codecs.BOM_UTF8 + b"new\r\n"
    (snapshot,) = result.snapshots
    assert snapshot.text == "new\r\n" and snapshot.bom


async def test_stale_base_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old\n")
    base = read_text_file(path)
    path.write_text("user\n")
    result = await DiskHost().apply_changes(
        [FileChange(path=path, base=base, new_text="agent\n")], label="t"
    )
    assert not result.applied
    assert result.failure is not None and "changed on disk" in result.failure
    assert path.read_text() == "user\n"


async def test_new_file_must_not_exist(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("exists\n")
    result = await DiskHost().apply_changes(
        [FileChange(path=path, base=None, new_text="x")], label="t"
    )
    assert not result.applied
    assert result.failure is not None and "already exists" in result.failure


async def test_all_bases_are_checked_before_anything_is_written(tmp_path: Path) -> None:
    good, stale = tmp_path / "good.txt", tmp_path / "stale.txt"
    good.write_text("g\n")
    stale.write_text("s\n")
    good_base, stale_base = read_text_file(good), read_text_file(stale)
    stale.write_text("moved\n")
    result = await DiskHost().apply_changes(
        [
            FileChange(path=good, base=good_base, new_text="G\n"),
            FileChange(path=stale, base=stale_base, new_text="S\n"),
        ],
        label="t",
    )
    assert not result.applied
    assert good.read_text() == "g\n"


async def test_deleted_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("x\n")
    base = read_text_file(path)
    path.unlink()
    result = await DiskHost().apply_changes(
        [FileChange(path=path, base=base, new_text="y\n")], label="t"
    )
    assert not result.applied
    assert result.failure is not None and "deleted" in result.failure
    assert not path.exists()


async def test_buffers_are_changed_in_memory_with_a_new_version(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("disk\n")
    buffered = TextSnapshot(path=path, text="buffer\n", version=4, source="buffer")
    host = DiskHost(buffers={path: buffered})
    assert host.buffer(path) is buffered
    result = await host.apply_changes(
        [FileChange(path=path, base=buffered, new_text="agent\n")], label="t"
    )
    assert result.applied
    assert host.buffers[path].text == "agent\n"
    assert host.buffers[path].version == 5
    assert result.snapshots == (host.buffers[path],)
    assert path.read_text() == "disk\n"


async def test_buffer_version_mismatch_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    v1 = TextSnapshot(path=path, text="x\n", version=1, source="buffer")
    host = DiskHost(buffers={path: v1})
    host.buffers[path] = TextSnapshot(path=path, text="x\n", version=2, source="buffer")
    result = await host.apply_changes([FileChange(path=path, base=v1, new_text="y\n")], label="t")
    assert not result.applied
    assert result.failure is not None and "changed in the editor" in result.failure
    assert host.buffers[path].text == "x\n"


async def test_save_documents_writes_buffer_text(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"disk\r\n")
    host = DiskHost(
        buffers={path: TextSnapshot(path=path, text="buffer\r\n", version=2, source="buffer")}
    )
    other = tmp_path / "other.py"
    await host.save_documents([path, other])
    assert path.read_bytes() == b"buffer\r\n"
    assert not other.exists()


async def test_default_permission_handler_rejects_with_a_reason() -> None:
    response = await DiskHost().request_permission(request())
    assert response.outcome == "selected"
    assert response.kind() == "reject_once"
    assert response.feedback is not None and "no permission handler" in response.feedback


async def test_permission_handler_and_update_sink_are_used() -> None:
    seen: list[PermissionRequest] = []
    updates: list[tuple[str, SessionUpdate]] = []

    async def allow(req: PermissionRequest) -> PermissionResponse:
        seen.append(req)
        return PermissionResponse(outcome="selected", option_id="allow_once")

    host = DiskHost(permission_handler=allow, on_update=lambda sid, u: updates.append((sid, u)))
    assert (await host.request_permission(request())).kind() == "allow_once"
    assert len(seen) == 1
    chunk = AgentMessageChunk(content=TextContent(text="hi"))
    host.emit("s1", chunk)
    assert updates == [("s1", chunk)]
    DiskHost().emit("s1", chunk)  # the default sink drops it


async def test_is_a_host_for_the_workspace(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("x\n")
    workspace = Workspace(host=DiskHost(), roots=(tmp_path,))
    snapshot = workspace.read(path)
    result = await workspace.apply(
        [FileChange(path=path, base=snapshot, new_text="y\n")], label="t"
    )
    assert result.applied and workspace.edited == {path}
    await workspace.before_disk_read()
    await workspace.after_disk_write()
