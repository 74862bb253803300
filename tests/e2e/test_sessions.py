"""Session methods and their errors: bad input gets a clear JSON-RPC error, the server stays up."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import error, expecting, reply, scenario

from .conftest import REPO_ROOT, VSCODE_ONLY, WAIT_S, Launch


@VSCODE_ONLY
async def test_session_lifecycle_and_bad_input(launch: Launch) -> None:
    editor = await launch(scenario(reply("unused"), name="no-model-calls"))

    created = await editor.request(methods.SESSION_NEW, {"mode": "acceptEdits"})
    session = created["sessionId"]
    assert created["modes"]["currentModeId"] == "acceptEdits"
    assert [m["id"] for m in created["modes"]["availableModes"]] == [
        "default",
        "acceptEdits",
        "plan",
        "bypassPermissions",
        "dontAsk",
    ]
    listed = await editor.request(methods.SESSION_LIST, None)
    assert listed == {
        "sessions": [
            {"sessionId": session, "cwd": str(editor.root.resolve()), "busy": False, "live": True}
        ]
    }

    assert (
        await editor.request(methods.SESSION_SET_MODE, {"sessionId": session, "modeId": "plan"})
        == {}
    )
    mode_update = await editor.wait_for_update(
        lambda u: u["update"]["sessionUpdate"] == "current_mode_update"
    )
    assert mode_update == {
        "sessionId": session,
        "update": {"sessionUpdate": "current_mode_update", "currentModeId": "plan"},
    }

    bad: list[tuple[str, object, str]] = [
        (
            methods.SESSION_PROMPT,
            {"sessionId": "nope", "prompt": [{"type": "text", "text": "x"}]},
            "unknown session id",
        ),
        (methods.SESSION_PROMPT, {"prompt": [{"type": "text", "text": "x"}]}, "sessionId"),
        (
            methods.SESSION_PROMPT,
            {"sessionId": session, "prompt": [{"type": "text"}]},
            "prompt[0].text",
        ),
        (
            methods.SESSION_PROMPT,
            {"sessionId": session, "prompt": [{"type": "image"}]},
            "prompt[0].type",
        ),
        (methods.SESSION_PROMPT, {"sessionId": session, "prompt": []}, "prompt"),
        (methods.SESSION_PROMPT, ["not", "an", "object"], "params must be a JSON object"),
        (
            methods.SESSION_PROMPT,
            {
                "sessionId": session,
                "prompt": [{"type": "resource", "resource": {"uri": "untitled:1", "text": "x"}}],
            },
            "prompt[0].resource.uri",
        ),
        (methods.SESSION_NEW, {"mode": "yolo"}, "mode"),
        (methods.SESSION_NEW, {"cwd": "relative/dir"}, "cwd"),
        (methods.SESSION_NEW, {"cwd": "/", "sessionID": "typo"}, "sessionID"),
        (methods.SESSION_SET_MODE, {"sessionId": "nope", "modeId": "plan"}, "unknown session id"),
    ]
    for method, params, needle in bad:
        with pytest.raises(JsonRpcInvalidParams) as caught:
            await editor.request(method, params)
        assert needle in caught.value.message, (method, params, caught.value.message)

    # A cancel for an unknown session is ignored; the server is still up and answering.
    editor.client.protocol.notify(methods.SESSION_CANCEL, {"sessionId": "nope"})
    assert (await editor.request(methods.SESSION_LIST, {}))["sessions"][0]["busy"] is False
    assert editor.scripted.requests == []
    # ...and said why as a window/logMessage warning.
    assert any(
        "ignored lspAgent/session/cancel: unknown session id" in m.message
        for m in editor.client.log_messages
    )


def test_importing_the_door_does_not_import_the_sdk() -> None:
    code = "import sys, lsp_agent.lsp.server; sys.exit(1 if 'anthropic' in sys.modules else 0)"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    assert subprocess.run([sys.executable, "-c", code], env=env, check=False).returncode == 0


@VSCODE_ONLY
async def test_bad_initialization_options_fail_initialize(launch: Launch) -> None:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        await launch(scenario(reply("unused")), init_options={"permissionMode": "yolo"})
    assert "initializationOptions.lspAgent: permissionMode" in caught.value.message


@VSCODE_ONLY
async def test_model_failure_is_an_error_and_the_session_survives(launch: Launch) -> None:
    editor = await launch(
        scenario(
            error(400, "messages.0: invalid content"),
            reply("Back again.", expect=expecting(last_user_contains="second try")),
        ),
        init_options={"model": "claude-from-init"},
    )
    session = await editor.new_session()

    with pytest.raises(JsonRpcException) as caught:
        await editor.prompt(session, "first try")
    assert caught.value.code == -32000
    assert "invalid content" in caught.value.message
    assert caught.value.data["stopReason"] == "end_turn"

    result = await editor.prompt(session, "second try")
    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert {body["model"] for body in editor.scripted.requests} == {"claude-from-init"}


@VSCODE_ONLY
async def test_prompt_while_busy_is_refused(launch: Launch) -> None:
    editor = await launch(
        scenario(reply("I am thinking about this for a long while", stall_after_events=4))
    )
    session = await editor.new_session()
    first = asyncio.ensure_future(editor.prompt(session, "slow one"))
    await editor.wait_for_update(lambda u: u["update"]["sessionUpdate"] == "agent_message_chunk")

    with pytest.raises(JsonRpcException) as caught:
        await editor.prompt(session, "second one")
    assert caught.value.code == -32001
    assert "already running a prompt" in caught.value.message
    assert (await editor.request(methods.SESSION_LIST, {}))["sessions"][0]["busy"] is True

    editor.client.protocol.notify(methods.SESSION_CANCEL, {"sessionId": session})
    result = await asyncio.wait_for(first, WAIT_S)
    assert result["stopReason"] == "cancelled"
    editor.scripted.assert_done()
