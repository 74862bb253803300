"""Permission prompts in plain words over the wire: a Bash reason that does not repeat the
command, and "always" rules for files shown as the path the user knows."""

from __future__ import annotations

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use

from .conftest import VSCODE_ONLY, Launch


@VSCODE_ONLY
async def test_bash_reason_and_file_rule_in_plain_words(launch: Launch) -> None:
    editor = await launch(
        scenario(
            reply(tool_use("Bash", {"command": "python -m pytest -q"}, id="toolu_bash")),
            reply(
                tool_use(
                    "Write",
                    {"file_path": "{{root}}/src/notes.txt", "content": "hello\n"},
                    id="toolu_write",
                ),
                expect=expecting(tool_results=[ToolResultExpect(is_error=True)]),
            ),
            reply("ok", expect=expecting(tool_results=[ToolResultExpect(is_error=True)])),
        )
    )
    (editor.root / "src").mkdir()
    editor.permission = lambda _p: {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
    result = await editor.prompt(await editor.new_session(), "test, then write notes")
    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    bash, write = editor.permission_requests
    assert bash["reason"] == (
        "It can run code or change files (only its version query is known to be safe)"
    )
    assert bash["suggestedRules"] == ["Bash(python -m pytest:*)"]
    assert bash["suggestedRuleLabels"] == ["Bash(python -m pytest:*)"]
    assert write["suggestedRules"] == [f"Edit(/{editor.root.as_posix()}/src/notes.txt)"]
    assert write["suggestedRuleLabels"] == ["Edit src/notes.txt"]
