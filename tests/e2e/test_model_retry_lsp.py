"""The model client's retries reach the editor: a `model_retry` session update before each
wait (attempt, maximum, delay, the API's error type), then the answer."""

from __future__ import annotations

from lsp_agent.testing.scenario import error, reply, scenario

from .conftest import VSCODE_ONLY, Launch


@VSCODE_ONLY
async def test_each_retry_is_a_session_update_before_the_answer(launch: Launch) -> None:
    steps = [
        error(529, "Overloaded", type="overloaded_error", retry_after_s=0.03),
        error(503, "Service unavailable", retry_after_s=0),
        reply("Here at last."),
    ]
    editor = await launch(scenario(*steps))
    session = await editor.new_session()
    result = await editor.prompt(session, "hello")
    assert result["stopReason"] == "end_turn"
    kinds = [u["update"]["sessionUpdate"] for u in editor.updates if u["sessionId"] == session]
    retries = [u["update"] for u in editor.updates if u["update"]["sessionUpdate"] == "model_retry"]
    assert [(r["attempt"], r["maxRetries"], r["status"], r["error"]) for r in retries] == [
        (1, 4, 529, "overloaded_error"),
        (2, 4, 503, "api_error"),
    ]
    assert retries[0]["delayMs"] == 30
    assert "Overloaded" in retries[0]["message"]
    # Both retries come before the first chunk of the answer.
    first_chunk = kinds.index("agent_message_chunk")
    assert [i for i, k in enumerate(kinds) if k == "model_retry"] == [
        i for i in range(first_chunk) if kinds[i] == "model_retry"
    ]
    assert kinds.count("model_retry") == 2
    assert len(editor.scripted.requests) == 3
    editor.scripted.assert_done()
