"""Memory commands through the LSP door, against the scripted model: a ``#`` note asks which
memory file (the permission prompt the editors answer), which approves the write, then writes
it like any edit;
``/init``'s CLAUDE.md goes through the normal edit review, where rejecting it writes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsp_agent.testing.scenario import reply, scenario, tool_use

from .conftest import Editor, Launch


def _answers(*option_ids: str) -> Any:
    """Answer the permission prompts with ``option_ids``, in order."""
    queue = list(option_ids)

    def answer(_params: dict[str, Any]) -> dict[str, Any]:
        return {"outcome": {"outcome": "selected", "optionId": queue.pop(0)}}

    return answer


async def _say(editor: Editor, session: str, text: str) -> dict[str, Any]:
    result = await editor.prompt(session, text)
    assert result["stopReason"] == "end_turn", result
    return result


def _said(editor: Editor) -> str:
    return "".join(
        u["update"]["content"]["text"]
        for u in editor.updates
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    )


async def test_a_note_goes_to_the_memory_file_the_user_picks(
    launch: Launch, tmp_path: Path
) -> None:
    editor = await launch(scenario(reply("noted")), init_options={"trusted": True})
    root = editor.root
    (root / "CLAUDE.md").write_text("# Team notes\n")
    session = await editor.new_session()
    editor.permission = _answers("local")
    await _say(editor, session, "# run the slow tests with -m slow")
    # One question: picking the file approves the write the default mode would ask about.
    (choice,) = editor.permission_requests
    assert [o["optionId"] for o in choice["options"]] == ["project", "local", "user", "cancel"]
    assert [o["kind"] for o in choice["options"]] == ["allow_once"] * 3 + ["reject_once"]
    assert "CLAUDE.local.md" in json.dumps(choice["options"][1])
    assert "~/.claude/CLAUDE.md" in json.dumps(choice["options"][2])
    assert choice["toolCall"]["rawInput"]["note"] == "run the slow tests with -m slow"
    # The write still shows as an edit card with its diff.
    diffs = [
        c
        for u in editor.updates
        if u["update"]["sessionUpdate"] in ("tool_call", "tool_call_update")
        for c in u["update"].get("content") or []
        if c.get("type") == "diff"
    ]
    assert diffs and diffs[-1]["path"] == str(root / "CLAUDE.local.md")
    assert diffs[-1]["newText"] == "- run the slow tests with -m slow\n"
    assert (root / "CLAUDE.local.md").read_text() == "- run the slow tests with -m slow\n"
    assert (root / "CLAUDE.md").read_text() == "# Team notes\n"
    assert "project memory (local)" in _said(editor)
    await _say(editor, session, "what do you know?")
    (request,) = editor.scripted.requests  # the note itself never went to the model
    assert "run the slow tests with -m slow" in json.dumps(request)


async def test_a_note_to_user_memory_still_asks_before_writing_under_the_home_claude_folder(
    launch: Launch,
) -> None:
    editor = await launch(scenario(), init_options={"trusted": True})
    session = await editor.new_session()
    editor.permission = _answers("user", "allow_once")
    await _say(editor, session, "# prefer small commits")
    choice, write = editor.permission_requests
    assert choice["toolCall"]["toolCallId"].startswith("memory_target_")
    assert write["toolCall"]["kind"] == "edit"  # ~/.claude is a protected path: asked with the diff
    assert "prefer small commits" in json.dumps(write)
    assert "user memory" in _said(editor)


async def test_init_writes_claude_md_through_the_edit_review_and_a_reject_writes_nothing(
    launch: Launch,
) -> None:
    content = "# CLAUDE.md\n\nRun `make test`.\n"
    write = tool_use("Write", {"file_path": "{{root}}/CLAUDE.md", "content": content})
    editor = await launch(
        scenario(reply(write), reply("You rejected it."), reply(write), reply("Wrote it.")),
        init_options={"trusted": True},
    )
    root = editor.root
    session = await editor.new_session()
    editor.permission = _answers("reject_once", "allow_once")
    await _say(editor, session, "/init")
    assert not (root / "CLAUDE.md").exists()
    (rejected,) = editor.permission_requests
    assert rejected["toolCall"]["kind"] == "edit"
    diff = [c for c in rejected["toolCall"]["content"] if c.get("type") == "diff"]
    assert diff and diff[0]["newText"] == content and diff[0]["path"].endswith("CLAUDE.md")
    prompt = json.dumps(editor.scripted.requests[0]["messages"][0])
    assert "create a CLAUDE.md file" in prompt  # /init's fixed prompt, as the user's turn
    results = json.dumps(editor.scripted.requests[1]["messages"][-1])
    assert "tool_result" in results and "reject" in results.lower()
    await _say(editor, session, "/init")
    assert (root / "CLAUDE.md").read_text() == content
    assert len(editor.permission_requests) == 2


async def test_memory_lists_the_files_and_opens_the_one_picked(launch: Launch) -> None:
    editor = await launch(scenario(), init_options={"trusted": True})
    root = editor.root
    (root / "CLAUDE.md").write_text("project notes\n")
    (root / "CLAUDE.local.md").write_text("my notes\n")
    session = await editor.new_session()
    editor.permission = _answers("file-1")
    result = await _say(editor, session, "/memory")
    (asked,) = editor.permission_requests
    names = [o["name"] for o in asked["options"]]
    assert names[-1] == "Don't open" and asked["options"][-1]["optionId"] == "dont_open"
    assert names[:2] == ["CLAUDE.md (project)", "CLAUDE.local.md (local)"]
    # pytest-lsp's client answers window/showDocument with success and records it.
    shown = editor.client.shown_documents
    assert [(d.uri, d.take_focus) for d in shown] == [((root / "CLAUDE.local.md").as_uri(), True)]
    said = _said(editor)
    assert said.index("| `CLAUDE.md` | project |") < said.index("Opened")  # listed, then asked
    assert "CLAUDE.local.md" in result.get("finalText", said)
    editor.permission = _answers("dont_open")
    await _say(editor, session, "/memory")
    assert len(shown) == 1 and "No memory file opened." in _said(editor)
    assert editor.scripted.requests == []  # the model is never asked


async def test_memory_offers_to_create_the_missing_claude_md_files_and_opens_the_new_one(
    launch: Launch, tmp_path: Path
) -> None:
    editor = await launch(scenario(), init_options={"trusted": True})
    root = editor.root
    user_file = tmp_path / "home" / ".claude" / "CLAUDE.md"
    session = await editor.new_session()
    pick: list[str] = []

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        if not params["toolCall"]["toolCallId"].startswith("memory_open_"):
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        names = {o["name"]: o["optionId"] for o in params["options"]}
        return {"outcome": {"outcome": "selected", "optionId": names[pick.pop(0)]}}

    editor.permission = answer
    pick.append("CLAUDE.md (project, new)")
    await _say(editor, session, "/memory")
    asked, create = editor.permission_requests
    names = [o["name"] for o in asked["options"]]
    assert "CLAUDE.md (project, new)" in names and "~/.claude/CLAUDE.md (user, new)" in names
    # The auto-memory index is in effect before it exists: it is offered, marked new.
    assert [n for n in names if "MEMORY.md" in n] == [
        n for n in names if "MEMORY.md" in n and n.endswith("(auto memory, new)")
    ]
    assert create["toolCall"]["kind"] == "edit"  # created through the edit review
    assert (root / "CLAUDE.md").read_text() == ""
    shown = editor.client.shown_documents
    assert [d.uri for d in shown] == [(root / "CLAUDE.md").as_uri()]
    assert "Opened" in _said(editor)

    pick.append("~/.claude/CLAUDE.md (user, new)")
    await _say(editor, session, "/memory")
    again = editor.permission_requests[2]
    names = [o["name"] for o in again["options"]]
    assert "CLAUDE.md (project)" in names and "CLAUDE.md (project, new)" not in names
    assert user_file.read_text() == ""
    assert [d.uri for d in shown][-1] == user_file.as_uri()
    assert len(editor.permission_requests) == 4  # ~/.claude always asks before the write
    pick.append("CLAUDE.md (project)")
    await _say(editor, session, "/memory")
    assert len(editor.permission_requests) == 5  # an existing file opens without a write
    assert not any("(user, new)" in o["name"] for o in editor.permission_requests[4]["options"])
    assert editor.scripted.requests == []
