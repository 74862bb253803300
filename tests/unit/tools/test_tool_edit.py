"""Edit: exact replacement, freshness checks, byte-exact encodings and line endings, buffers."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from lsp_agent.protocol.events import DiffItem, Location
from lsp_agent.tools.base import ToolError
from lsp_agent.tools.edit import EditTool
from lsp_agent.tools.read import ReadTool

from .conftest import Env

EDIT = EditTool()
READ = ReadTool()


async def read(env: Env, path: Path) -> None:
    await env.run(READ, {"file_path": str(path)})


async def edit(env: Env, path: Path, old: str, new: str, **extra: object) -> str:
    out = await env.run(
        EDIT, {"file_path": str(path), "old_string": old, "new_string": new, **extra}
    )
    assert not out.is_error
    return out.text


async def test_simple_edit_says_where_without_echoing_the_text(env: Env) -> None:
    path = env.write_text("a.py", "".join(f"line{i}\n" for i in range(1, 21)))
    await read(env, path)
    text = await edit(env, path, "line10\n", "ten\nTEN\n")
    assert path.read_text().splitlines()[8:12] == ["line9", "ten", "TEN", "line11"]
    assert text == f"The file {path} has been updated successfully (lines 10-11)."
    text = await edit(env, path, "line3", "three")
    assert text == f"The file {path} has been updated successfully (line 3)."


async def test_must_read_first(env: Env) -> None:
    path = env.write_text("a.py", "x = 1\n")
    with pytest.raises(ToolError, match="has not been read yet"):
        await edit(env, path, "1", "2")
    assert path.read_text() == "x = 1\n"


async def test_file_changed_on_disk_since_read(env: Env) -> None:
    path = env.write_text("a.py", "x = 1\n")
    await read(env, path)
    path.write_text("x = 1\ny = 2\n")
    with pytest.raises(ToolError, match="modified since read"):
        await edit(env, path, "x = 1", "x = 3")
    assert path.read_text() == "x = 1\ny = 2\n"


async def test_file_changed_between_prepare_and_call_is_not_clobbered(env: Env) -> None:
    path = env.write_text("a.py", "x = 1\n")
    await read(env, path)
    inp = EDIT.parse({"file_path": str(path), "old_string": "1", "new_string": "2"})
    prepared = await EDIT.prepare(inp, env.ctx)
    path.write_text("x = 1  # user\n")
    with pytest.raises(ToolError, match=r"not applied.*changed at line 1 while this change"):
        await EDIT.call(inp, prepared, env.ctx)
    assert path.read_text() == "x = 1  # user\n"


async def test_file_changed_elsewhere_between_prepare_and_call_is_merged(env: Env) -> None:
    path = env.write_text("a.py", "x = 1\n\ny = 1\n")
    await read(env, path)
    inp = EDIT.parse({"file_path": str(path), "old_string": "x = 1", "new_string": "x = 2"})
    prepared = await EDIT.prepare(inp, env.ctx)
    path.write_text("x = 1\n\ny = 1  # user\n")
    out = await EDIT.call(inp, prepared, env.ctx)
    assert "changed other lines of this file" in out.text
    assert path.read_text() == "x = 2\n\ny = 1  # user\n"


async def test_identical_strings_are_refused(env: Env) -> None:
    path = env.write_text("a.py", "x\n")
    await read(env, path)
    with pytest.raises(ToolError, match="exactly the same"):
        await edit(env, path, "x", "x")


async def test_crlf_file_stays_crlf_byte_exact(env: Env) -> None:
    path = env.write_bytes("w.txt", b"alpha\r\nbeta\r\ngamma\r\n")
    await read(env, path)
    # The model writes \n; the file keeps \r\n, including in the added lines.
    await edit(env, path, "alpha\nbeta\n", "alpha\nBETA\nbeta2\n")
    assert path.read_bytes() == b"alpha\r\nBETA\r\nbeta2\r\ngamma\r\n"


async def test_mixed_line_endings_outside_the_change_are_kept(env: Env) -> None:
    original = b"a\r\nb\nc\r\nd\ne\r\n"
    path = env.write_bytes("m.txt", original)
    await read(env, path)
    await edit(env, path, "b\nc\nd", "b\nC\nd")
    assert path.read_bytes() == b"a\r\nb\nC\r\nd\ne\r\n"


async def test_utf8_bom_is_kept(env: Env) -> None:
    path = env.write_bytes("bom.cs", codecs.BOM_UTF8 + b"class A {}\n")
    await read(env, path)
    await edit(env, path, "A", "B")
    assert path.read_bytes() == codecs.BOM_UTF8 + b"class B {}\n"


async def test_utf16_file_is_edited_in_utf16(env: Env) -> None:
    body = "x = 'é'\r\ny = 2\r\n"
    path = env.write_bytes("u16.txt", codecs.BOM_UTF16_LE + body.encode("utf-16-le"))
    await read(env, path)
    await edit(env, path, "y = 2", "y = '🐍'")
    expected = "x = 'é'\r\ny = '🐍'\r\n"
    assert path.read_bytes() == codecs.BOM_UTF16_LE + expected.encode("utf-16-le")


async def test_latin1_file_bytes_outside_the_edit_are_preserved(env: Env) -> None:
    original = b"# caf\xe9\nname = 'old'\n# \xff\xfe end\n"
    path = env.write_bytes("l1.py", original)
    await read(env, path)
    await edit(env, path, "'old'", "'new \xe9'")
    assert path.read_bytes() == b"# caf\xe9\nname = 'new \xe9'\n# \xff\xfe end\n"


async def test_text_the_encoding_cannot_hold_is_refused(env: Env) -> None:
    path = env.write_bytes("l1.py", b"x = 'caf\xe9'\n")
    await read(env, path)
    with pytest.raises(ToolError, match="latin-1"):
        await edit(env, path, "x", "€")
    assert path.read_bytes() == b"x = 'caf\xe9'\n"


async def test_non_bmp_text(env: Env) -> None:
    path = env.write_text("e.md", "I like 🐍 and 🦀.\n")
    await read(env, path)
    await edit(env, path, "🦀", "🐹")
    assert path.read_text(encoding="utf-8") == "I like 🐍 and 🐹.\n"


async def test_not_found_shows_closest_lines(env: Env) -> None:
    lines = [f"value_{i} = compute({i})" for i in range(1, 30)]
    lines[14] = "    result = compute_total(items, tax=0.2)"
    path = env.write_text("calc.py", "\n".join(lines) + "\n")
    await read(env, path)
    with pytest.raises(ToolError) as err:
        await edit(env, path, "result = compute_totals(items, tax=0.25)", "x")
    message = str(err.value)
    assert "not found" in message
    assert "lines 15-15" in message
    assert "15\t    result = compute_total(items, tax=0.2)" in message


async def test_not_found_says_when_only_whitespace_differs(env: Env) -> None:
    path = env.write_text("a.py", "def f():\n    return 1\n")
    await read(env, path)
    with pytest.raises(ToolError, match="whitespace"):
        await edit(env, path, "def f():\n  return 1", "x")


@pytest.mark.parametrize(
    ("content", "old", "says"),
    [
        (
            "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
            "    if x {\n        return 1\n    }",
            "indents with spaces, but the file indents with tabs: the text matches at line 2 "
            "when each 4 leading spaces are a tab",
        ),
        (
            "def f():\n    return 1\n",
            "def f():\n\treturn 1",
            "indents with tabs, but the file indents with spaces: the text matches at line 1 "
            "when each tab is 4 spaces",
        ),
    ],
    ids=["spaces-for-tabs", "tabs-for-spaces"],
)
async def test_not_found_names_tabs_versus_spaces(
    env: Env, content: str, old: str, says: str
) -> None:
    path = env.write_text("a.go", content)
    await read(env, path)
    with pytest.raises(ToolError) as err:
        await edit(env, path, old, "x")
    assert says in str(err.value)
    assert path.read_text() == content


async def test_not_found_detects_line_number_prefixes(env: Env) -> None:
    path = env.write_text("a.py", "a = 1\nb = 2\n")
    await read(env, path)
    with pytest.raises(ToolError, match="line-number prefixes"):
        await edit(env, path, "1\ta = 1\n2\tb = 2", "x")


async def test_ambiguous_match_lists_line_numbers(env: Env) -> None:
    path = env.write_text("a.py", "x = 1\ny = 2\nx = 1\n\nx = 1\n")
    await read(env, path)
    with pytest.raises(ToolError) as err:
        await edit(env, path, "x = 1", "x = 9")
    message = str(err.value)
    assert "Found 3 matches" in message
    assert "lines 1, 3, 5" in message
    assert "replace_all" in message


async def test_replace_all(env: Env) -> None:
    path = env.write_bytes("a.py", b"foo(1)\r\nbar\r\nfoo(2)\r\nfoo(3)\r\n")
    await read(env, path)
    text = await edit(env, path, "foo", "baz", replace_all=True)
    assert path.read_bytes() == b"baz(1)\r\nbar\r\nbaz(2)\r\nbaz(3)\r\n"
    assert "All 3 occurrences" in text


async def test_deleting_whole_lines_removes_their_line_break(env: Env) -> None:
    path = env.write_bytes("a.py", b"keep1\r\ndrop me\r\nkeep2\r\n")
    await read(env, path)
    await edit(env, path, "drop me", "")
    assert path.read_bytes() == b"keep1\r\nkeep2\r\n"


async def test_deleting_part_of_a_line_keeps_the_break(env: Env) -> None:
    path = env.write_text("a.py", "x = 1  # todo\ny\n")
    await read(env, path)
    await edit(env, path, "  # todo", "")
    assert path.read_text() == "x = 1\ny\n"


async def test_empty_old_string_creates_a_missing_file(env: Env) -> None:
    path = env.root / "pkg" / "new.py"
    text = await edit(env, path, "", "print('hi')\n")
    assert path.read_text() == "print('hi')\n"
    assert "created" in text
    # now known to the read state: a follow-up edit works without a Read
    await edit(env, path, "hi", "hello")
    assert path.read_text() == "print('hello')\n"


async def test_empty_old_string_on_a_non_empty_file_is_refused(env: Env) -> None:
    path = env.write_text("a.py", "content\n")
    await read(env, path)
    with pytest.raises(ToolError, match="already has content"):
        await edit(env, path, "", "other")


async def test_empty_old_string_fills_an_empty_file(env: Env) -> None:
    path = env.write_bytes("a.py", b"")
    await read(env, path)
    await edit(env, path, "", "x = 1\n")
    assert path.read_text() == "x = 1\n"


async def test_missing_file_with_old_string_is_an_error(env: Env) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        await edit(env, env.root / "nope.py", "a", "b")


async def test_consecutive_edits_need_no_reread(env: Env) -> None:
    path = env.write_text("a.py", "a\nb\n")
    await read(env, path)
    await edit(env, path, "a", "A")
    await edit(env, path, "b", "B")
    assert path.read_text() == "A\nB\n"


async def test_prepared_carries_change_diff_and_location(env: Env) -> None:
    path = env.write_bytes("src/m.py", b"one\r\ntwo\r\nthree\r\n")
    await read(env, path)
    prepared = await env.prepare(
        EDIT, {"file_path": str(path), "old_string": "two", "new_string": "2"}
    )
    (change,) = prepared.changes
    assert change.path == path
    assert change.base is not None and change.base.text == "one\r\ntwo\r\nthree\r\n"
    assert change.new_text == "one\r\n2\r\nthree\r\n"
    (diff,) = prepared.content
    assert isinstance(diff, DiffItem)
    assert diff.old_text == "one\r\ntwo\r\nthree\r\n"
    assert diff.new_text == "one\r\n2\r\nthree\r\n"
    assert diff.unified_diff == (
        "--- src/m.py\n+++ src/m.py\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    )
    assert prepared.paths == (path,)
    assert prepared.locations == (Location(path=str(path), line=2),)
    assert prepared.title == "Edit src/m.py"
    # prepare has no side effects
    assert path.read_bytes() == b"one\r\ntwo\r\nthree\r\n"


async def test_edit_applies_to_the_unsaved_buffer_not_the_disk(env: Env) -> None:
    path = env.write_text("a.py", "disk text\n")
    env.open_buffer(path, "buffer text\n", version=3)
    await read(env, path)
    await edit(env, path, "buffer", "edited")
    assert path.read_text() == "disk text\n"
    buffered = env.host.buffers[path]
    assert buffered.text == "edited text\n"
    assert buffered.version == 4
    assert path in env.ctx.workspace.edited


async def test_user_typing_after_read_refuses_the_edit(env: Env) -> None:
    path = env.write_text("a.py", "x\n")
    env.open_buffer(path, "x = 1\n", version=1)
    await read(env, path)
    env.open_buffer(path, "x = 1\nuser line\n", version=2)
    with pytest.raises(ToolError, match="modified since read"):
        await edit(env, path, "x = 1", "x = 2")
    assert env.host.buffers[path].text == "x = 1\nuser line\n"


async def test_user_typing_between_prepare_and_call_refuses_the_edit(env: Env) -> None:
    path = env.write_text("a.py", "x\n")
    env.open_buffer(path, "x = 1\n", version=1)
    await read(env, path)
    inp = EDIT.parse({"file_path": str(path), "old_string": "1", "new_string": "2"})
    prepared = await EDIT.prepare(inp, env.ctx)
    env.open_buffer(path, "x = 1  # typed\n", version=2)
    with pytest.raises(ToolError, match="changed at line 1 while this change waited"):
        await EDIT.call(inp, prepared, env.ctx)
    assert env.host.buffers[path].text == "x = 1  # typed\n"


def test_schema_fields() -> None:
    schema = EDIT.spec().input_schema
    assert set(schema["properties"]) == {"file_path", "old_string", "new_string", "replace_all"}
    assert schema["required"] == ["file_path", "old_string", "new_string"]
    assert EDIT.kind == "edit" and not EDIT.read_only
    assert not EDIT.reads_disk and not EDIT.writes_disk
