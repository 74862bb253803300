"""Disk-reading tools see what the agent wrote: edited buffers are saved before Bash runs,
and clean buffers whose files Bash changed are flagged for reload."""

from __future__ import annotations

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use

from .conftest import Launch


async def test_bash_sees_the_agent_edit_and_clean_buffers_reload(launch: Launch) -> None:
    editor = await launch(
        scenario(
            reply(
                tool_use("Read", {"file_path": "{{root}}/a.py"}, id="toolu_read"),
                tool_use(
                    "Edit",
                    {"file_path": "{{root}}/a.py", "old_string": "OLD", "new_string": "NEW 🚀"},
                    id="toolu_edit",
                ),
            ),
            reply(
                tool_use(
                    "Bash",
                    {"command": "cat a.py && printf 'rewritten\\n' > b.txt"},
                    id="toolu_bash",
                ),
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=False),
                        ToolResultExpect(is_error=False),
                    ]
                ),
            ),
            reply(
                "Checked.",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=False, contains="value = 'NEW 🚀'")]
                ),
            ),
        )
    )
    a = editor.root / "a.py"
    a.write_text("value = 'OLD'\n", encoding="utf-8")
    b = editor.root / "b.txt"
    b.write_text("original\n")
    editor.open(a)
    editor.open(b)  # clean: equal to the disk

    result = await editor.prompt(await editor.new_session(), "update and check")

    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert editor.docs[a.as_uri()].text == "value = 'NEW 🚀'\n"
    assert a.read_text(encoding="utf-8") == "value = 'NEW 🚀'\n"
    if editor.preset == "visual_studio_code":
        assert editor.saved == [[a.as_uri()]]  # saved by the client
    else:
        assert editor.saved == []  # written by the server
    assert [b.as_uri()] in editor.reloads
    assert all(a.as_uri() not in uris for uris in editor.reloads)
