"""Write: create and overwrite through the change-set pipeline."""

from __future__ import annotations

import codecs

import pytest

from lsp_agent.protocol.events import DiffItem
from lsp_agent.tools.base import ToolError
from lsp_agent.tools.read import ReadTool
from lsp_agent.tools.write import WriteTool

from .conftest import Env

WRITE = WriteTool()
READ = ReadTool()


async def test_creates_a_new_file_with_parent_directories(env: Env) -> None:
    path = env.root / "a" / "b" / "new.py"
    prepared = await env.prepare(WRITE, {"file_path": str(path), "content": "x = 1\n"})
    (change,) = prepared.changes
    assert change.base is None
    (diff,) = prepared.content
    assert isinstance(diff, DiffItem) and diff.old_text is None
    assert diff.unified_diff is not None and diff.unified_diff.startswith("--- /dev/null\n")
    out = await env.run(WRITE, {"file_path": str(path), "content": "x = 1\n"})
    assert path.read_text() == "x = 1\n"
    assert out.text.endswith("created successfully at: " + str(path) + " (1 line)")
    assert env.ctx.read_state.digests[path] == env.ctx.workspace.read(path).digest


async def test_overwrite_requires_a_read(env: Env) -> None:
    path = env.write_text("a.txt", "old\n")
    with pytest.raises(ToolError, match="has not been read yet"):
        await env.run(WRITE, {"file_path": str(path), "content": "new\n"})
    assert path.read_text() == "old\n"


async def test_overwrite_after_read(env: Env) -> None:
    path = env.write_text("a.txt", "old\n")
    await env.run(READ, {"file_path": str(path)})
    out = await env.run(WRITE, {"file_path": str(path), "content": "new\nlines\n"})
    assert path.read_text() == "new\nlines\n"
    assert "overwritten (2 lines)" in out.text


async def test_overwrite_refused_when_changed_since_read(env: Env) -> None:
    path = env.write_text("a.txt", "old\n")
    await env.run(READ, {"file_path": str(path)})
    path.write_text("user\n")
    with pytest.raises(ToolError, match="modified since read"):
        await env.run(WRITE, {"file_path": str(path), "content": "new\n"})
    assert path.read_text() == "user\n"


async def test_overwrite_keeps_crlf_bom_and_encoding(env: Env) -> None:
    path = env.write_bytes("w.txt", codecs.BOM_UTF16_LE + "a\r\nb\r\n".encode("utf-16-le"))
    await env.run(READ, {"file_path": str(path)})
    await env.run(WRITE, {"file_path": str(path), "content": "x\ny 🐍\n"})
    assert path.read_bytes() == codecs.BOM_UTF16_LE + "x\r\ny 🐍\r\n".encode("utf-16-le")


async def test_lf_file_stays_lf(env: Env) -> None:
    path = env.write_bytes("u.txt", b"a\nb\n")
    await env.run(READ, {"file_path": str(path)})
    await env.run(WRITE, {"file_path": str(path), "content": "c\nd\n"})
    assert path.read_bytes() == b"c\nd\n"


async def test_file_appearing_after_prepare_is_not_clobbered(env: Env) -> None:
    path = env.root / "race.txt"
    inp = WRITE.parse({"file_path": str(path), "content": "agent\n"})
    prepared = await WRITE.prepare(inp, env.ctx)
    path.write_text("someone else\n")
    with pytest.raises(ToolError, match="already exists"):
        await WRITE.call(inp, prepared, env.ctx)
    assert path.read_text() == "someone else\n"


async def test_directory_is_refused(env: Env) -> None:
    (env.root / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await env.run(WRITE, {"file_path": str(env.root / "d"), "content": "x"})


async def test_relative_path_is_refused(env: Env) -> None:
    with pytest.raises(ToolError, match="absolute"):
        await env.run(WRITE, {"file_path": "x.txt", "content": "x"})


async def test_write_to_open_buffer_changes_the_buffer(env: Env) -> None:
    path = env.write_text("a.txt", "disk\n")
    env.open_buffer(path, "buffer\n", version=5)
    await env.run(READ, {"file_path": str(path)})
    await env.run(WRITE, {"file_path": str(path), "content": "agent\n"})
    assert env.host.buffers[path].text == "agent\n"
    assert env.host.buffers[path].version == 6
    assert path.read_text() == "disk\n"
