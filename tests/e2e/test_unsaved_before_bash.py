"""When the LSP door cannot save an edited buffer before a disk-reading tool (here the file's
encoding cannot hold the edit, as a read-only mount or a full disk would fail it too), Bash
does not run on the stale disk: the model gets an error naming the file and the reason (a
client without ``saveDocuments``, so the server saves by itself)."""

from __future__ import annotations

import pytest

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use

from .conftest import Launch

NEOVIM_ONLY = pytest.mark.parametrize("preset", ["neovim@v0.11.0"], indirect=True)


@NEOVIM_ONLY
async def test_bash_is_not_run_when_the_edited_buffer_cannot_be_saved(launch: Launch) -> None:
    ok = expecting(tool_results=[ToolResultExpect(is_error=False)])
    editor = await launch(
        scenario(
            reply(tool_use("Read", {"file_path": "{{root}}/m.py"}, id="t_read")),
            reply(
                tool_use(
                    "Edit",
                    {"file_path": "{{root}}/m.py", "old_string": "0", "new_string": "'€'"},
                    id="t_edit",
                ),
                expect=ok,
            ),
            reply(tool_use("Bash", {"command": "cat m.py > seen.txt"}, id="t_bash"), expect=ok),
            reply(
                "The disk does not hold my edit.",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=True, contains="could not be saved")]
                ),
            ),
        )
    )
    path = editor.root / "m.py"
    path.write_bytes("name = 'café'\nvalue = 0\n".encode("latin-1"))
    editor.open(path, text="name = 'café'\nvalue = 0\n")
    await editor.prompt(await editor.new_session(mode="bypassPermissions"), "edit and check")
    editor.scripted.assert_done()
    assert not (editor.root / "seen.txt").exists()
    assert path.read_bytes() == "name = 'café'\nvalue = 0\n".encode("latin-1")
