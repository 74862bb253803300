"""Rewind across server restarts over LSP, with both client presets: the prompts of a session
loaded after a restart can be rewound to (code and conversation), the rewind is written to the
transcript, and a later reload replays it without the prompts it cut."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use

from .conftest import WAIT_S, Editor, Launch, assert_history_consistent

OK = ToolResultExpect(is_error=False)


async def stop(editor: Editor) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(editor.client.shutdown_session(), WAIT_S)
    await editor.client.stop()


def replayed(editor: Editor, session: str) -> list[dict[str, Any]]:
    return [u["update"] for u in editor.updates if u["sessionId"] == session]


def records(data: Path, session: str) -> list[dict[str, Any]]:
    [path] = data.rglob(f"{session}.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_prompts_from_before_a_restart_can_be_rewound(launch: Launch) -> None:
    first = await launch(
        scenario(
            reply("Hello."),
            reply(tool_use("Read", {"file_path": "{{root}}/a.py"}, id="toolu_read")),
            reply(
                tool_use(
                    "Edit",
                    {"file_path": "{{root}}/a.py", "old_string": "two", "new_string": "TWO"},
                    id="toolu_edit",
                ),
                tool_use("Bash", {"command": "rm b.txt"}, id="toolu_rm"),
                expect=expecting(tool_results=[OK]),
            ),
            reply("Done.", expect=expecting(tool_results=[OK, OK])),
        )
    )
    root = first.root
    data = root.parent / "data"
    (root / "a.py").write_text("one\ntwo\nthree\n")
    (root / "b.txt").write_text("bee\n")
    session = await first.new_session(mode="bypassPermissions")
    await first.prompt(session, "say hello")
    await first.prompt(session, "edit a.py and remove b.txt")
    assert (root / "a.py").read_text() == "one\nTWO\nthree\n" and not (root / "b.txt").exists()
    # Each prompt's checkpoint is on the branch, after its messages.
    saved = [r for r in records(data, session) if r["type"] == "checkpoint"]
    assert [Path(p).name for p in saved[1]["data"]["files"]] == ["a.py", "b.txt"]
    await stop(first)

    second = await launch(
        scenario(reply("Fresh start.", expect=expecting(last_user_contains="instead")))
    )
    await second.request(methods.SESSION_LOAD, {"sessionId": session})
    prompts = [u for u in replayed(second, session) if u["sessionUpdate"] == "user_message_chunk"]
    listed = (await second.request(methods.SESSION_CHECKPOINTS, {"sessionId": session}))[
        "checkpoints"
    ]
    # The prompt list comes back from the transcript, with the ids the replay showed.
    assert [(c["messageId"], c["prompt"]) for c in listed] == [
        (u["messageId"], u["content"]["text"]) for u in prompts
    ]
    assert [Path(p).name for p in listed[1]["files"]] == ["a.py", "b.txt"]
    (root / "c.txt").write_text("the user's own file\n")

    result = await second.request(
        methods.SESSION_REWIND,
        {"sessionId": session, "messageId": listed[1]["messageId"], "restore": "both"},
    )
    assert result["conversation"] is True and result["prompt"] == "edit a.py and remove b.txt"
    assert (root / "a.py").read_text() == "one\ntwo\nthree\n"
    assert (root / "b.txt").read_text() == "bee\n"
    assert (root / "c.txt").read_text() == "the user's own file\n"
    await second.prompt(session, "do something else instead")
    sent = second.scripted.requests[-1]["messages"]
    assert "edit a.py" not in json.dumps(sent) and "say hello" in json.dumps(sent)
    assert len(sent) == 3
    assert_history_consistent(second.scripted.requests)
    [rewind] = [r for r in records(data, session) if r["type"] == "rewind"]
    assert (
        rewind["data"]["restore"] == "both"
        and rewind["data"]["messageId"] == listed[1]["messageId"]
    )
    await stop(second)

    third = await launch(scenario())
    await third.request(methods.SESSION_LOAD, {"sessionId": session})
    again = replayed(third, session)
    texts = [u["content"]["text"] for u in again if u["sessionUpdate"] == "user_message_chunk"]
    assert texts == ["say hello", "do something else instead"]  # the cut prompt stays cut
    notes = [u["content"]["text"] for u in again if u["sessionUpdate"] == "agent_message_chunk"]
    assert any(n.startswith("Rewound to before prompt") and "restored" in n for n in notes)
    listed = (await third.request(methods.SESSION_CHECKPOINTS, {"sessionId": session}))[
        "checkpoints"
    ]
    assert [c["prompt"] for c in listed] == ["say hello", "do something else instead"]


async def test_a_code_rewind_after_a_restart_keeps_the_conversation(launch: Launch) -> None:
    first = await launch(
        scenario(
            reply(
                tool_use(
                    "Write",
                    {"file_path": "{{root}}/new.py", "content": "x = 1\n"},
                    id="toolu_write",
                )
            ),
            reply("Written.", expect=expecting(tool_results=[OK])),
        )
    )
    root = first.root
    session = await first.new_session(mode="acceptEdits")
    answered = await first.prompt(session, "write new.py")
    assert (root / "new.py").exists()
    await stop(first)

    second = await launch(scenario(reply("Still here.")))
    await second.request(methods.SESSION_LOAD, {"sessionId": session})
    [prompt] = [u for u in replayed(second, session) if u["sessionUpdate"] == "user_message_chunk"]
    # The id the prompt result gave is the one the replay shows and rewind takes.
    assert prompt["messageId"] == answered["messageId"]
    result = await second.request(
        methods.SESSION_REWIND,
        {"sessionId": session, "messageId": prompt["messageId"][:8], "restore": "code"},
    )
    assert result["conversation"] is False and result["removed"] == [str(root / "new.py")]
    assert not (root / "new.py").exists()
    await second.prompt(session, "and now?")
    assert "write new.py" in json.dumps(second.scripted.requests[-1]["messages"])
