"""Read: cat -n output from the buffer overlay or the disk, and its refusals."""

from __future__ import annotations

import codecs

import pytest

from lsp_agent.protocol.events import Location
from lsp_agent.tools.base import ToolError
from lsp_agent.tools.read import MAX_WHOLE_FILE_BYTES, ReadTool

from .conftest import Env

READ = ReadTool()


async def test_cat_n_format_keeps_tabs_literal(env: Env) -> None:
    path = env.write_text("a.py", "def f():\n\treturn 1\n")
    out = await env.run(READ, {"file_path": str(path)})
    assert out.text == "1\tdef f():\n2\t\treturn 1"
    assert not out.is_error


async def test_crlf_is_not_shown(env: Env) -> None:
    path = env.write_bytes("w.txt", b"one\r\ntwo\r\n")
    out = await env.run(READ, {"file_path": str(path)})
    assert out.text == "1\tone\n2\ttwo"
    assert "\r" not in out.text


async def test_records_digest_of_what_was_read(env: Env) -> None:
    path = env.write_text("a.txt", "x\n")
    await env.run(READ, {"file_path": str(path)})
    assert env.ctx.read_state.digests[path] == env.ctx.workspace.read(path).digest


async def test_partial_read_counts_as_read(env: Env) -> None:
    path = env.write_text("a.txt", "".join(f"l{i}\n" for i in range(10)))
    await env.run(READ, {"file_path": str(path), "offset": 3, "limit": 2})
    assert path in env.ctx.read_state.digests


async def test_offset_and_limit(env: Env) -> None:
    path = env.write_text("a.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    out = await env.run(READ, {"file_path": str(path), "offset": 4, "limit": 3})
    assert out.text.splitlines()[:3] == ["4\tline 4", "5\tline 5", "6\tline 6"]
    assert "Showed lines 4-6 of 10" in out.text


async def test_default_limit_is_2000_lines(env: Env) -> None:
    path = env.write_text("big.txt", "".join(f"{i}\n" for i in range(1, 2501)))
    out = await env.run(READ, {"file_path": str(path)})
    lines = out.text.split("\n")
    assert lines[1999] == "2000\t2000"
    assert "2001\t2001" not in out.text
    assert "Showed lines 1-2000 of 2500" in out.text


async def test_offset_past_end_is_a_note(env: Env) -> None:
    path = env.write_text("a.txt", "a\nb\n")
    out = await env.run(READ, {"file_path": str(path), "offset": 9})
    assert not out.is_error
    assert "offset 9 is past the end" in out.text
    assert "2 lines" in out.text


async def test_long_lines_are_truncated_with_a_marker(env: Env) -> None:
    path = env.write_text("min.js", "x" * 5000 + "\nshort\n")
    out = await env.run(READ, {"file_path": str(path)})
    first, second = out.text.split("\n")
    assert first.startswith("1\t" + "x" * 2000)
    assert "x" * 2001 not in first
    assert "line truncated: 5000 characters" in first
    assert second == "2\tshort"


async def test_empty_file(env: Env) -> None:
    path = env.write_bytes("empty.txt", b"")
    out = await env.run(READ, {"file_path": str(path)})
    assert out.text == "(file is empty)"
    assert not out.is_error
    assert path in env.ctx.read_state.digests


async def test_utf8_bom_and_non_bmp_text(env: Env) -> None:
    path = env.write_bytes("bom.txt", codecs.BOM_UTF8 + "snake 🐍 ok\n".encode())
    out = await env.run(READ, {"file_path": str(path)})
    assert out.text == "1\tsnake 🐍 ok"


async def test_utf16_file(env: Env) -> None:
    path = env.write_bytes(
        "u16.txt", codecs.BOM_UTF16_LE + "héllo\r\nwörld\r\n".encode("utf-16-le")
    )
    out = await env.run(READ, {"file_path": str(path)})
    assert out.text == "1\théllo\n2\twörld"


async def test_latin1_file(env: Env) -> None:
    path = env.write_bytes("l1.txt", b"caf\xe9\n")
    out = await env.run(READ, {"file_path": str(path)})
    assert out.text == "1\tcafé"


async def test_directory_is_refused(env: Env) -> None:
    (env.root / "pkg").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await env.run(READ, {"file_path": str(env.root / "pkg")})


async def test_binary_file_is_refused(env: Env) -> None:
    path = env.write_bytes("img.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolError, match="binary"):
        await env.run(READ, {"file_path": str(path)})
    assert path not in env.ctx.read_state.digests


async def test_broken_utf16_is_refused_cleanly(env: Env) -> None:
    path = env.write_bytes("odd.txt", codecs.BOM_UTF16_LE + b"a\x00b")
    with pytest.raises(ToolError, match=r"(?i)not valid utf-16-le"):
        await env.run(READ, {"file_path": str(path)})


async def test_huge_file_gives_a_partial_view_with_hints(env: Env) -> None:
    line = "y" * 99 + "\n"
    path = env.write_text("huge.log", line * (MAX_WHOLE_FILE_BYTES // 100 + 10))
    out = await env.run(READ, {"file_path": str(path)})
    assert out.text.startswith("1\t" + "y" * 99)
    assert "PARTIAL view" in out.text and "offset=" in out.text and "limit=" in out.text
    assert len(out.text) < 45_000
    assert out.raw_output is not None and out.raw_output["partial"] is True
    assert path in env.ctx.read_state.digests
    out = await env.run(READ, {"file_path": str(path), "offset": 10, "limit": 2})
    assert out.text.startswith("10\t" + "y" * 99 + "\n11\t")


async def test_missing_file_suggests_similar_names(env: Env) -> None:
    env.write_text("src/config.py", "")
    with pytest.raises(ToolError) as err:
        await env.run(READ, {"file_path": str(env.root / "src" / "confg.py")})
    message = str(err.value)
    assert "does not exist" in message
    assert str(env.root / "src" / "config.py") in message


async def test_missing_file_other_extension_is_suggested(env: Env) -> None:
    env.write_text("app.ts", "")
    with pytest.raises(ToolError, match=r"app\.ts"):
        await env.run(READ, {"file_path": str(env.root / "app.js")})


async def test_relative_path_is_refused(env: Env) -> None:
    env.write_text("a.txt", "x")
    with pytest.raises(ToolError, match="absolute"):
        await env.run(READ, {"file_path": "a.txt"})


async def test_path_is_resolved(env: Env) -> None:
    path = env.write_text("d/a.txt", "x\n")
    (env.root / "link").symlink_to(env.root / "d")
    prepared = await env.prepare(READ, {"file_path": str(env.root / "link" / ".." / "d" / "a.txt")})
    assert prepared.paths == (path,)
    prepared = await env.prepare(READ, {"file_path": str(env.root / "link" / "a.txt")})
    assert prepared.paths == (path,)


async def test_location_and_title(env: Env) -> None:
    path = env.write_text("src/a.txt", "x\n")
    prepared = await env.prepare(READ, {"file_path": str(path), "offset": 5, "limit": 10})
    assert prepared.locations == (Location(path=str(path), line=5),)
    assert prepared.title == "Read src/a.txt (lines 5-14)"


async def test_unsaved_buffer_text_is_what_read_sees(env: Env) -> None:
    path = env.write_text("a.py", "on disk\n")
    env.open_buffer(path, "unsaved in editor\n", version=7)
    out = await env.run(READ, {"file_path": str(path)})
    assert out.text == "1\tunsaved in editor"
    assert out.raw_output == {"total_lines": 1, "source": "buffer"}


async def test_buffer_of_a_file_not_yet_on_disk(env: Env) -> None:
    path = env.root / "new.py"
    env.open_buffer(path, "draft\n")
    out = await env.run(READ, {"file_path": str(path)})
    assert out.text == "1\tdraft"


def test_schema_is_clean() -> None:
    schema = READ.spec().input_schema
    assert schema["required"] == ["file_path"]
    assert schema["properties"]["offset"] == {
        "type": "integer",
        "minimum": 0,
        "description": schema["properties"]["offset"]["description"],
    }
    assert "title" not in schema["properties"]["file_path"]
    assert schema["additionalProperties"] is False
    assert "description" not in schema  # the input model's docstring is not prompt text
    assert READ.read_only and READ.concurrency_safe
    assert not READ.reads_disk and not READ.writes_disk
