"""The conversation's start block and taking memory out of a conversation (a memory file that
no longer applies: removed, or the workspace no longer trusted)."""

from __future__ import annotations

from lsp_agent.context.memory.changes import CHANGED_HEADER, MEMORY_MARKERS
from lsp_agent.context.memory.render import ON_DEMAND_HEADER
from lsp_agent.context.start import is_start_block, with_start, without_memory
from lsp_agent.model.types import Message, TextBlock, ToolResultBlock, ToolUseBlock

MARKERS = MEMORY_MARKERS


def _text(message: Message) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def test_without_memory_takes_out_every_memory_text_and_keeps_the_rest() -> None:
    history = with_start(
        (
            Message(role="user", content=(TextBlock(text="first prompt"),)),
            Message(
                role="assistant",
                content=(ToolUseBlock(id="t1", name="Read", input={"file_path": "/w/a.py"}),),
            ),
            Message(
                role="user",
                content=(
                    ToolResultBlock(tool_use_id="t1", content="a = 1"),
                    TextBlock(text=f"{ON_DEMAND_HEADER}\n\nSECRET-SUBFOLDER"),
                ),
            ),
            Message(role="assistant", content=(TextBlock(text="ok"),)),
            Message(
                role="user",
                content=(
                    TextBlock(text=f"<system-reminder>\n\n{CHANGED_HEADER}\n\nSECRET-CHANGED"),
                    TextBlock(text="second prompt"),
                ),
            ),
        ),
        "SECRET-START",
    )
    assert is_start_block(history[0].content[0])
    cleaned = without_memory(history, markers=MARKERS)
    assert len(cleaned) == len(history)
    assert "SECRET" not in repr(cleaned)
    assert _text(cleaned[0]) == "first prompt"
    assert cleaned[2].content == (ToolResultBlock(tool_use_id="t1", content="a = 1"),)
    assert _text(cleaned[4]) == "second prompt"
    assert [m.role for m in cleaned] == [m.role for m in history]


def test_a_message_left_empty_keeps_a_stub() -> None:
    history = (
        Message(role="user", content=(TextBlock(text="hi"),)),
        Message(role="assistant", content=(TextBlock(text="ok"),)),
        Message(role="user", content=(TextBlock(text=f"{ON_DEMAND_HEADER}\n\nrules"),)),
    )
    cleaned = without_memory(history, markers=MARKERS)
    assert len(cleaned) == 3 and cleaned[2].role == "user"
    assert _text(cleaned[2]) == "(memory files removed from the conversation)"
