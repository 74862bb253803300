"""Checkpoints and rewind over LSP, with a real shadow git store: a turn that edits an unsaved
buffer, writes a new file and runs a shell command that deletes, moves and creates files is
undone by ``lspAgent/session/rewind`` — open buffers through one versioned
``workspace/applyEdit``, closed files on disk — while what the user typed afterwards is kept
(or shown as a conflict when it overlaps)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import (
    ToolResultExpect,
    expecting,
    reply,
    scenario,
    tool_use,
)

from .conftest import Editor, Launch

ON_DISK = "one\ntwo\nthree\nfour\nfive\n"
UNSAVED = ON_DISK + "six (unsaved)\n"


def _turn(new_string: str = "TWO") -> list[Any]:
    ok = ToolResultExpect(is_error=False)
    return [
        reply(
            tool_use("Read", {"file_path": "{{root}}/a.py"}, id="toolu_read"),
            tool_use(
                "Edit",
                {"file_path": "{{root}}/a.py", "old_string": "two", "new_string": new_string},
                id="toolu_edit",
            ),
            tool_use(
                "Write",
                {"file_path": "{{root}}/new.py", "content": "created = True\n"},
                id="toolu_write",
            ),
        ),
        reply(
            tool_use(
                "Bash",
                {"command": "rm b.txt && mv c.txt d.txt && mkdir gen && printf 'x\\n' > gen/e.txt"},
                id="toolu_bash",
            ),
            expect=expecting(tool_results=[ok, ok, ok]),
        ),
        reply("Done.", expect=expecting(tool_results=[ok])),
    ]


async def _setup(editor: Editor) -> tuple[Path, str]:
    root = editor.root
    a = root / "a.py"
    a.write_text(ON_DISK)
    (root / "b.txt").write_text("bee\n")
    (root / "c.txt").write_text("sea\n")
    editor.open(a)
    editor.type_text(a, UNSAVED)  # the user's unsaved text before the prompt
    session = await editor.new_session()
    result = await editor.prompt(session, "refactor things")
    assert result["stopReason"] == "end_turn"
    assert not (root / "b.txt").exists() and (root / "d.txt").exists()
    return a, session


async def _only_prompt(editor: Editor, session: str) -> dict[str, Any]:
    listed = await editor.request(methods.SESSION_CHECKPOINTS, {"sessionId": session})
    [checkpoint] = listed["checkpoints"]
    assert checkpoint["prompt"] == "refactor things"
    return dict(checkpoint)


async def test_rewind_restores_edits_shell_changes_and_keeps_later_typing(launch: Launch) -> None:
    editor = await launch(scenario(*_turn(), reply("Again.", expect=expecting())))
    a, session = await _setup(editor)
    root = editor.root
    checkpoint = await _only_prompt(editor, session)
    assert {Path(p).name for p in checkpoint["files"]} == {
        "a.py",
        "new.py",
        "b.txt",
        "c.txt",
        "d.txt",
        "e.txt",
    }
    # After the turn the user changes a line the agent did not touch.
    typed = editor.docs[a.as_uri()].text.replace("five", "FIVE (mine)")
    editor.type_text(a, typed)
    edits_before = len(editor.applied_edits)

    result = await editor.request(
        methods.SESSION_REWIND,
        {"sessionId": session, "messageId": checkpoint["messageId"], "restore": "both"},
    )

    assert result["conversation"] is True and result["prompt"] == "refactor things"
    assert result.get("conflicts", []) == [] and "failure" not in result
    # The open buffer: back to the user's unsaved text, plus what they typed since, through
    # exactly one versioned edit (the editor's undo takes it back).
    assert editor.docs[a.as_uri()].text == UNSAVED.replace("five", "FIVE (mine)")
    [edit] = editor.applied_edits[edits_before:]
    if editor.preset == "visual_studio_code":
        assert edit.edit.document_changes
    # Closed files: the deleted one is back, the moved one back in place, created ones gone.
    assert (root / "b.txt").read_text() == "bee\n"
    assert (root / "c.txt").read_text() == "sea\n"
    assert not (root / "d.txt").exists()
    assert not (root / "new.py").exists()
    assert not (root / "gen" / "e.txt").exists()
    assert str(root / "b.txt") in result["restored"] and str(root / "new.py") in result["removed"]
    # The conversation: the next request no longer carries the rewound turn.
    await editor.prompt(session, "start over")
    last = editor.scripted.requests[-1]["messages"]
    assert len(last) == 1 and "start over" in str(last[0]["content"])


async def test_overlapping_user_edit_is_a_conflict_and_nothing_is_lost(launch: Launch) -> None:
    editor = await launch(scenario(*_turn()))
    a, session = await _setup(editor)
    checkpoint = await _only_prompt(editor, session)
    typed = editor.docs[a.as_uri()].text.replace("TWO", "TWO, and mine")
    editor.type_text(a, typed)

    result = await editor.request(
        methods.SESSION_REWIND,
        {"sessionId": session, "messageId": checkpoint["messageId"][:8], "restore": "code"},
    )

    [conflict] = result["conflicts"]
    assert conflict["uri"] == a.as_uri() and conflict["regions"] == 1
    text = editor.docs[a.as_uri()].text
    assert "<<<<<<< yours" in text and "TWO, and mine\n" in text and "\ntwo\n" in text
    assert (editor.root / "b.txt").read_text() == "bee\n"
    assert result["conversation"] is False


MINE = "TWO, and mine"


def _answer(option: str | None) -> Any:
    def answer(params: dict[str, Any]) -> dict[str, Any]:
        if option is None:
            return {"outcome": {"outcome": "cancelled"}}
        return {"outcome": {"outcome": "selected", "optionId": option}}

    return answer


@pytest.mark.parametrize("option", ["checkpoint", "mine", "markers", None])
async def test_overlapping_hunks_are_reviewed_in_the_editor(
    launch: Launch, option: str | None
) -> None:
    editor = await launch(scenario(*_turn()))
    a, session = await _setup(editor)
    checkpoint = await _only_prompt(editor, session)
    # The user changes the line the agent changed (overlap) and a line it did not.
    typed = editor.docs[a.as_uri()].text.replace("TWO", MINE).replace("five", "FIVE (mine)")
    editor.type_text(a, typed)
    asked_before = len(editor.permission_requests)
    editor.permission = _answer(option)

    result = await editor.request(
        methods.SESSION_REWIND,
        {"sessionId": session, "messageId": checkpoint["messageId"], "restore": "code"},
    )

    [asked] = editor.permission_requests[asked_before:]
    call = asked["toolCall"]
    assert call["title"] == "Rewind: conflicts in a.py"
    assert call["toolCallId"].startswith("rewind_conflict_")
    assert [o["optionId"] for o in asked["options"]] == ["checkpoint", "mine", "markers"]
    assert [o["name"] for o in asked["options"]] == [
        "Restore the checkpoint's lines",
        "Keep my lines",
        "Keep both with conflict markers",
    ]
    [diff] = call["content"]
    # From the user's text now to the checkpoint's lines in the overlapping hunk only.
    assert diff["type"] == "diff" and diff["uri"] == a.as_uri()
    assert diff["oldText"] == typed
    assert diff["newText"] == typed.replace(MINE, "two")
    changed = [line for line in diff["unifiedDiff"].splitlines()[2:] if line[:1] in "+-"]
    assert changed == [f"-{MINE}", "+two"]
    text = editor.docs[a.as_uri()].text
    # Whatever the answer, the hunk that does not overlap merges and the rest is restored.
    assert "FIVE (mine)" in text and "six (unsaved)" in text
    assert (editor.root / "b.txt").read_text() == "bee\n"
    if option == "checkpoint":
        assert text == UNSAVED.replace("five", "FIVE (mine)")
        assert result["conflicts"] == []
    elif option == "mine":
        assert text == UNSAVED.replace("two", MINE).replace("five", "FIVE (mine)")
        assert result["conflicts"] == []
    else:  # markers, or the prompt cancelled: both sides kept between markers
        [conflict] = result["conflicts"]
        assert conflict["uri"] == a.as_uri() and conflict["regions"] == 1
        assert "<<<<<<< yours" in text and f"{MINE}\n" in text and "\ntwo\n" in text


async def test_a_prompt_started_while_the_review_waits_cancels_the_rewind(launch: Launch) -> None:
    later = [
        reply(tool_use("Write", {"file_path": "{{root}}/later.py", "content": "x = 1\n"})),
        reply("Not written.", expect=expecting()),
    ]
    editor = await launch(scenario(*_turn(), *later))
    a, session = await _setup(editor)
    checkpoint = await _only_prompt(editor, session)
    typed = editor.docs[a.as_uri()].text.replace("TWO", MINE)
    editor.type_text(a, typed)
    turn_asks = asyncio.Event()
    rewind_done = asyncio.Event()
    tasks: list[asyncio.Task[dict[str, Any]]] = []

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        if params["toolCall"]["toolCallId"].startswith("rewind_conflict_"):
            # While the user looks at the review, a prompt starts in the same session.
            tasks.append(asyncio.create_task(editor.prompt(session, "write later.py")))
            await turn_asks.wait()
            return {"outcome": {"outcome": "selected", "optionId": "checkpoint"}}
        turn_asks.set()
        await rewind_done.wait()
        return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}

    editor.permission = answer
    try:
        await editor.request(
            methods.SESSION_REWIND,
            {"sessionId": session, "messageId": checkpoint["messageId"], "restore": "code"},
        )
    except Exception as exc:
        assert "while the rewind was waiting" in str(exc)
    else:
        raise AssertionError("the rewind must not apply over a running prompt")
    finally:
        rewind_done.set()
    await tasks[0]
    # Nothing was changed: the user's line, the turn's deletion, all as they were.
    assert editor.docs[a.as_uri()].text == typed
    assert not (editor.root / "b.txt").exists()


async def test_rewind_errors_name_the_problem(launch: Launch) -> None:
    editor = await launch(scenario(reply("Hi.")))
    session = await editor.new_session()
    await editor.prompt(session, "hello")
    listed = await editor.request(methods.SESSION_CHECKPOINTS, {"sessionId": session})
    assert [c["files"] for c in listed["checkpoints"]] == [[]]
    try:
        await editor.request(
            methods.SESSION_REWIND, {"sessionId": session, "messageId": "nope", "restore": "code"}
        )
    except Exception as exc:  # the JSON-RPC error reaches the client as an exception
        assert "no prompt 'nope'" in str(exc)
    else:
        raise AssertionError("an unknown prompt id must be refused")
