"""Project memory through the LSP door: an untrusted workspace keeps its memory files from the
model and trusting it (``didChangeConfiguration``) loads them without a restart; edits to a
memory file, unsaved in the editor or on disk, reach the model from the next turn; a file a
tool touches in a subfolder brings that folder's CLAUDE.md as a message after the results."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from lsprotocol import types

from lsp_agent.testing.scenario import reply, scenario, tool_use

from .conftest import Editor, Launch

PROJECT = "PROJECT-MEMORY-7f3a: always answer in haiku"
USER = "USER-MEMORY-2b9c: prefer tabs"


def _request_text(body: dict[str, Any]) -> str:
    """Everything a model request carried (system and messages), as text."""
    return json.dumps({"system": body.get("system"), "messages": body["messages"]})


def _home(root: Path) -> Path:
    return root.parent / "home"


async def _say(editor: Editor, session: str, text: str) -> None:
    result = await editor.prompt(session, text)
    assert result["stopReason"] == "end_turn", result


async def test_untrusted_workspace_memory_never_reaches_the_model_until_trusted(
    launch: Launch, tmp_path: Path
) -> None:
    root = tmp_path / "my ws é"
    (root / "CLAUDE.md").write_text(PROJECT)
    (root / ".claude" / "rules").mkdir(parents=True)
    (root / ".claude" / "rules" / "r.md").write_text("RULE-MEMORY-51ee")
    (root / "AGENTS.md").write_text("AGENTS-MEMORY-90ab")
    user = _home(root) / ".claude" / "CLAUDE.md"
    user.parent.mkdir(parents=True)
    user.write_text(USER)
    editor = await launch(scenario(reply("one"), reply("two")))  # trusted defaults to false
    session = await editor.new_session()
    await _say(editor, session, "hello")
    first = _request_text(editor.scripted.requests[0])
    assert USER in first
    for leaked in (PROJECT, "RULE-MEMORY-51ee", "AGENTS-MEMORY-90ab"):
        assert leaked not in first
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"lspAgent": {"trusted": True}})
    )
    await _say(editor, session, "and now?")
    second = _request_text(editor.scripted.requests[1])
    assert PROJECT in second and "RULE-MEMORY-51ee" in second and USER in second
    assert second.index(USER) < second.index(PROJECT)


async def test_memory_edits_apply_from_the_next_turn(launch: Launch, tmp_path: Path) -> None:
    root = tmp_path / "my ws é"
    memory = root / "CLAUDE.md"
    memory.write_text("VERSION-ONE of the instructions\n")
    editor = await launch(
        scenario(reply("one"), reply("two"), reply("three")), init_options={"trusted": True}
    )
    session = await editor.new_session()
    await _say(editor, session, "first")
    editor.open(memory)
    editor.type_text(memory, "VERSION-TWO, typed and not saved\n")
    await asyncio.sleep(0)  # the notifications are sent in order before the prompt
    await _say(editor, session, "second")
    (root / "CLAUDE.local.md").write_text("LOCAL-ADDED on disk\n")
    await _say(editor, session, "third")
    texts = [_request_text(body) for body in editor.scripted.requests]
    assert "VERSION-ONE" in texts[0] and "VERSION-TWO" not in texts[0]
    # An edit is a reminder in front of the next prompt; the start block (and with it the
    # cached prefix) stays as the conversation began.
    prompts = [json.dumps(body["messages"][-1]) for body in editor.scripted.requests]
    assert "VERSION-TWO" in prompts[1] and "VERSION-ONE" not in prompts[1]
    assert "VERSION-ONE" in json.dumps(editor.scripted.requests[1]["messages"][0]["content"][0])
    assert "LOCAL-ADDED" in prompts[2] and "LOCAL-ADDED" not in texts[1]


async def test_a_subfolder_claude_md_loads_when_a_tool_reads_there(
    launch: Launch, tmp_path: Path
) -> None:
    root = tmp_path / "my ws é"
    (root / "pkg").mkdir()
    (root / "pkg" / "CLAUDE.md").write_text("SUBFOLDER-MEMORY-c0de\n")
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    editor = await launch(
        scenario(
            reply(tool_use("Read", {"file_path": "{{root}}/pkg/mod.py"})),
            reply("read it"),
            reply("again"),
        ),
        init_options={"trusted": True},
    )
    session = await editor.new_session()
    await _say(editor, session, "read pkg/mod.py")
    first = _request_text(editor.scripted.requests[0])
    assert "SUBFOLDER-MEMORY" not in first
    results = editor.scripted.requests[1]["messages"][-1]["content"]
    assert results[0]["type"] == "tool_result"
    assert any("SUBFOLDER-MEMORY-c0de" in str(b.get("text", "")) for b in results[1:])
    await _say(editor, session, "more")
    third = _request_text(editor.scripted.requests[2])
    assert third.count("SUBFOLDER-MEMORY-c0de") == 1  # appended once, kept in the history


async def test_auto_memory_writes_are_reviewed_and_can_be_rejected(
    launch: Launch, tmp_path: Path
) -> None:
    from lsp_agent.context.memory.automemory import auto_memory_dir

    root = tmp_path / "my ws é"
    folder = auto_memory_dir(home=_home(root), cwd=root.resolve())
    index = folder / "MEMORY.md"
    entry = "- 2026-12-01 (source: user) indent with tabs"
    editor = await launch(
        scenario(
            reply(tool_use("Write", {"file_path": str(index), "content": entry + "\n"})),
            reply("not saved"),
            reply(tool_use("Write", {"file_path": str(index), "content": entry + "\n"})),
            reply("saved"),
            reply("I remember"),
        ),
        init_options={"trusted": True},
    )
    session = await editor.new_session()
    editor.permission = lambda _p: {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
    await _say(editor, session, "remember: tabs")
    assert str(folder) in _request_text(editor.scripted.requests[0])
    (asked,) = editor.permission_requests
    assert str(index) in json.dumps(asked)
    assert "configures git or the agent" not in json.dumps(asked)  # not a sensitive path
    assert not index.exists()
    editor.permission = lambda _p: {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    await _say(editor, session, "ok, save it")
    assert index.read_text() == entry + "\n"
    await _say(editor, session, "what do you remember?")
    # The saved memory reaches the model right after the Write's result, before the next
    # request of the same turn, as a reminder of the changed index; it is not told again.
    assert entry in json.dumps(editor.scripted.requests[3]["messages"][-1])
    assert entry not in json.dumps(editor.scripted.requests[4]["messages"][-1])
    assert json.dumps(editor.scripted.requests[4]["messages"]).count(entry) == json.dumps(
        editor.scripted.requests[3]["messages"]
    ).count(entry)
