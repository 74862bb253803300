"""Model faults on the scripted Messages-API server: a broken stream closes the tool card it
announced, duplicate tool_use ids get one result each, an oversized prompt is refused up front
and never kept, a stalled endpoint fails after the configured read timeout and says so."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from lsp_agent.lsp import methods
from lsp_agent.model.anthropic import REQUEST_LIMIT_BYTES
from lsp_agent.testing.scenario import error, expecting, reply, scenario, tool_use

from .conftest import VSCODE_ONLY, Launch, assert_history_consistent


@VSCODE_ONLY
@pytest.mark.parametrize("cut", ["drop", "stall_then_end"])
async def test_a_stream_cut_after_tool_use_started_closes_the_card(
    launch: Launch, cut: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 3 events: message_start, the tool_use's content_block_start, one input delta.
    fault = {"drop_after_events": 3} if cut == "drop" else {"stall_after_events": 3}
    monkeypatch.setenv("API_TIMEOUT_MS", "1500")
    steps = [
        reply(tool_use("Read", {"file_path": "{{root}}/a.txt"}, id="toolu_cut"), **fault),
        reply("second prompt works", expect=expecting(last_user_contains="again")),
    ]
    editor = await launch(scenario(*steps))
    session = await editor.new_session()
    with pytest.raises(JsonRpcException) as failed:
        await editor.prompt(session, "go")
    assert failed.value.code == -32000
    if cut == "stall_then_end":
        assert "read timeout of 1.5 s (API_TIMEOUT_MS)" in failed.value.message
    closing = await editor.wait_for_update(
        lambda u: (
            u["update"]["sessionUpdate"] == "tool_call_update"
            and u["update"]["toolCallId"] == "toolu_cut"
        )
    )
    assert closing["update"]["status"] == "failed"
    result = await editor.prompt(session, "again")
    assert result["stopReason"] == "end_turn"
    assert_history_consistent(editor.scripted.requests)


@VSCODE_ONLY
async def test_duplicate_tool_use_ids_get_one_result_each(launch: Launch) -> None:
    editor = await launch(
        scenario(
            reply(
                tool_use("Read", {"file_path": "{{root}}/a.txt"}, id="toolu_dup"),
                tool_use("Read", {"file_path": "{{root}}/a.txt"}, id="toolu_dup"),
            ),
            reply("done"),
            reply("later", expect=expecting(last_user_contains="later")),
        )
    )
    (editor.root / "a.txt").write_text("x = 1\n")
    session = await editor.new_session()
    assert (await editor.prompt(session, "read twice"))["stopReason"] == "end_turn"
    assert (await editor.prompt(session, "later"))["stopReason"] == "end_turn"
    assert_history_consistent(editor.scripted.requests)
    results = [
        b["tool_use_id"]
        for m in editor.scripted.requests[1]["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert sorted(results) == ["toolu_dup", "toolu_dup_dup2"]


@VSCODE_ONLY
async def test_an_oversized_prompt_is_refused_and_not_kept(launch: Launch) -> None:
    editor = await launch(
        scenario(reply("small prompts work", expect=expecting(last_user_contains="hello")))
    )
    session = await editor.new_session()
    huge = "A" * (REQUEST_LIMIT_BYTES + 1)
    with pytest.raises(JsonRpcException) as refused:
        await editor.request(
            methods.SESSION_PROMPT,
            {"sessionId": session, "prompt": [{"type": "text", "text": huge}]},
        )
    assert refused.value.code == -32000
    assert f"{REQUEST_LIMIT_BYTES + 1:,} bytes" in refused.value.message
    assert editor.scripted.requests == []  # never sent
    result = await editor.prompt(session, "hello")
    assert result["stopReason"] == "end_turn"
    (request,) = editor.scripted.requests
    assert len(str(request["messages"])) < 10_000  # the refused prompt is not in the history


@VSCODE_ONLY
async def test_the_settings_env_sets_the_read_timeout(launch: Launch, tmp_path: Path) -> None:
    # Claude Code's "env" object in ~/.claude/settings.json reaches the model client.
    settings = tmp_path / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"env": {"API_TIMEOUT_MS": "1200"}}))
    editor = await launch(scenario(reply("never seen", stall_after_events=1)))
    session = await editor.new_session()
    with pytest.raises(JsonRpcException) as failed:
        await editor.prompt(session, "go")
    assert "read timeout of 1.2 s (API_TIMEOUT_MS)" in failed.value.message


@VSCODE_ONLY
async def test_a_prompt_refused_as_too_large_is_dropped_from_the_history(launch: Launch) -> None:
    # The endpoint refuses the request (HTTP 413): the conversation as a whole is too large,
    # though the prompt alone passed the up-front check. Later prompts must still be sent.
    editor = await launch(
        scenario(
            error(413, type="request_too_large", message="Request exceeds the maximum size"),
            reply("small prompts work", expect=expecting(last_user_contains="hello")),
        )
    )
    session = await editor.new_session()
    with pytest.raises(JsonRpcException) as refused:
        await editor.prompt(session, "the bulky one")
    assert "HTTP 413" in refused.value.message
    assert re.search(r"the request of [\d,]+ bytes as too large", refused.value.message)
    assert "dropped from the conversation" in refused.value.message
    result = await editor.prompt(session, "hello")
    assert result["stopReason"] == "end_turn"
    assert "the bulky one" not in json.dumps(editor.scripted.requests[-1]["messages"])
    assert_history_consistent(editor.scripted.requests)
