"""The LSP door's own save of an edited buffer re-checks the path right before writing: after
a command swapped the file's directory for a symbolic link, the buffer is not written through
the link (a client without ``saveDocuments``, so the server saves by itself)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use

from .conftest import Launch

NEOVIM_ONLY = pytest.mark.parametrize("preset", ["neovim@v0.11.0"], indirect=True)


@NEOVIM_ONLY
async def test_a_buffer_is_not_saved_through_a_swapped_directory(
    launch: Launch, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.py").write_text("precious = True\n")
    ok = expecting(tool_results=[ToolResultExpect(is_error=False)])
    editor = await launch(
        scenario(
            reply(tool_use("Read", {"file_path": "{{root}}/src/app.py"}, id="t_read")),
            reply(
                tool_use(
                    "Edit",
                    {
                        "file_path": "{{root}}/src/app.py",
                        "old_string": "x = 1",
                        "new_string": "x = 2",
                    },
                    id="t_edit",
                ),
                expect=ok,
            ),
            # The first command saves the edited buffer, then swaps the folder for a link.
            reply(
                tool_use("Bash", {"command": f"mv src real && ln -s '{outside}' src"}, id="t_swap"),
                expect=ok,
            ),
            reply(tool_use("Bash", {"command": "echo hi"}, id="t_after"), expect=ok),
            reply("done", expect=ok),
        )
    )
    app = editor.root / "src" / "app.py"
    app.parent.mkdir()
    app.write_text("x = 1\n")
    editor.open(app)
    await editor.prompt(await editor.new_session(), "change x")
    editor.scripted.assert_done()
    assert (editor.root / "real" / "app.py").read_text() == "x = 2\n"  # saved before the swap
    # The buffer now differs from what the link points at; saving it would write outside.
    assert (outside / "app.py").read_text() == "precious = True\n"
