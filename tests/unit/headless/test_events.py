"""EventStream: history messages and tool progress become ordered ``run -p`` events."""

from __future__ import annotations

from typing import Any

from lsp_agent.headless.events import EventStream
from lsp_agent.model.types import Message, TextBlock, ToolResultBlock, ToolUseBlock
from lsp_agent.protocol.events import ContentItem, TextContent, ToolCall, ToolCallUpdate
from lsp_agent.protocol.permissions import Refusal


class Recorder:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def init(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def message(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def progress(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def result(self, event: dict[str, Any]) -> None:
        self.events.append(event)


PROMPT = Message.user_text("fix it")
USE = ToolUseBlock(id="t1", name="Edit", input={"file_path": "/p/a.py"})
ASSISTANT = Message(role="assistant", content=(TextBlock(text="Editing."), USE))
DENIED = Message(
    role="user",
    content=(ToolResultBlock(tool_use_id="t1", content="Permission denied: no.", is_error=True),),
)
FINAL = Message(role="assistant", content=(TextBlock(text="Could not edit."),))


def make(history: list[Message]) -> tuple[EventStream, Recorder]:
    recorder = Recorder()
    stream = EventStream(renderer=recorder, session_id="s", history=lambda: tuple(history), skip=1)
    return stream, recorder


def kinds(recorder: Recorder) -> list[str]:
    return [e["type"] + (f":{e['status']}" if e.get("status") else "") for e in recorder.events]


def test_progress_waits_for_its_tool_use_message() -> None:
    history = [PROMPT]
    stream, recorder = make(history)
    # The tool call is announced while the answer streams, before the message is committed.
    stream.on_update("s", ToolCall(tool_call_id="t1", title="Edit"))
    assert recorder.events == []
    history.append(ASSISTANT)
    stream.on_update("s", ToolCallUpdate(tool_call_id="t1", title="Edit a.py"))
    stream.on_update("s", ToolCallUpdate(tool_call_id="t1", status="failed"))
    history += [DENIED, FINAL]
    stream.finish()
    assert kinds(recorder) == [
        "assistant",
        "tool_progress:pending",
        "tool_progress",
        "tool_progress:failed",
        "user",
        "assistant",
    ]
    assert recorder.events[1]["tool_name"] == "Edit"
    assert recorder.events[2]["title"] == "Edit a.py"


def test_prompt_message_is_not_echoed_and_messages_render_once() -> None:
    history = [PROMPT, ASSISTANT]
    stream, recorder = make(history)
    stream.flush()
    stream.flush()
    assert kinds(recorder) == ["assistant"]
    assert recorder.events[0]["message"]["content"][1]["name"] == "Edit"


def test_streamed_output_becomes_progress_output() -> None:
    history = [PROMPT, ASSISTANT]
    stream, recorder = make(history)
    stream.on_update(
        "s",
        ToolCallUpdate(tool_call_id="t1", content=(ContentItem(content=TextContent(text="..")),)),
    )
    assert recorder.events[-1]["output"] == ".."


def _refused(kind: str) -> ToolCallUpdate:
    refusal = Refusal(kind=kind, reason="a deny rule")  # type: ignore[arg-type]
    return ToolCallUpdate(
        tool_call_id="t1", status="failed", raw_output={"refusal": refusal.to_wire()}
    )


def test_last_text_and_denials() -> None:
    stream, _ = make([PROMPT, ASSISTANT, DENIED, FINAL])
    stream.on_update("s", _refused("denied"))
    assert stream.last_assistant_text() == "Could not edit."
    assert stream.permission_denials() == [
        {"tool_name": "Edit", "tool_use_id": "t1", "tool_input": {"file_path": "/p/a.py"}}
    ]


def test_other_errors_are_not_denials() -> None:
    failed = Message(
        role="user",
        content=(ToolResultBlock(tool_use_id="t1", content="old_string not found", is_error=True),),
    )
    stream, _ = make([PROMPT, ASSISTANT, failed])
    assert stream.permission_denials() == []


def test_denials_are_the_denied_refusals_whatever_the_text_says() -> None:
    stream, _ = make([PROMPT, ASSISTANT, DENIED, FINAL])
    assert stream.permission_denials() == []  # the text alone proves nothing
    stream.on_update("s", _refused("rejected"))
    assert stream.permission_denials() == []
    stream.on_update("s", _refused("denied"))
    assert [d["tool_use_id"] for d in stream.permission_denials()] == ["t1"]
