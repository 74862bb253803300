"""``initializationOptions.lspAgent.maxModelRequests`` caps the model requests of one prompt:
a model that keeps calling tools is stopped after that many requests, and the prompt's stop
reason says why."""

from __future__ import annotations

from lsp_agent.testing.scenario import reply, scenario, tool_use

from .conftest import VSCODE_ONLY, Launch, assert_history_consistent


@VSCODE_ONLY
async def test_max_model_requests_ends_the_turn(launch: Launch) -> None:
    steps = [
        reply(tool_use("Read", {"file_path": "{{root}}/a.txt"}, id=f"toolu_{n}")) for n in range(3)
    ]
    editor = await launch(scenario(*steps), init_options={"maxModelRequests": 3})
    (editor.root / "a.txt").write_text("again\n")
    session = await editor.new_session()
    result = await editor.prompt(session, "read it forever")
    assert result["stopReason"] == "max_turn_requests"
    assert len(editor.scripted.requests) == 3  # no fourth request after the third tool result
    editor.scripted.assert_done()
    # The last batch's result is kept, so the next prompt starts from a valid history.
    assert_history_consistent(editor.scripted.requests)
