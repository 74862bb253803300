"""The conversation's start block: the memory files as the first block of the first user
message, where Claude Code puts them (its prompt-cache layers: system prompt and tools, then the
project context, then the conversation).

Keeping memory out of the system prompt keeps the system prompt byte-identical across projects
and across edits of a memory file: an edit reaches the model as a reminder appended to the
conversation (:mod:`lsp_agent.context.memory.changes`), and the start block itself is rebuilt
only when the conversation starts again (first prompt, ``/clear``, a compaction, a resumed
session whose cache has long expired). The Anthropic adapter puts a cache breakpoint after the
first block of the first message, so the start block is cached with the system prompt.

Pure functions over :class:`~lsp_agent.model.types.Message`.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsp_agent.model.types import Message, TextBlock

START_OPEN = (
    "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n"
)
"""First line(s) of the start block (Claude Code wraps its project context the same way)."""

START_CLOSE = "\n</system-reminder>"


def start_block(memory: str) -> TextBlock:
    """The start block holding ``memory`` (the rendered memory files)."""
    return TextBlock(text=f"{START_OPEN}{memory}{START_CLOSE}")


def is_start_block(block: object) -> bool:
    """Whether ``block`` is a start block (see :func:`start_block`)."""
    return isinstance(block, TextBlock) and block.text.startswith(START_OPEN)


def with_start(messages: Sequence[Message], memory: str | None) -> tuple[Message, ...]:
    """``messages`` whose first message begins with the start block of ``memory``: an older
    start block is replaced, none is inserted; ``memory`` ``None`` removes it. ``messages``
    empty or opened by an assistant message (never, in a valid history): returned unchanged."""
    if not messages or messages[0].role != "user":
        return tuple(messages)
    first = messages[0]
    opened = bool(first.content) and is_start_block(first.content[0])
    rest = first.content[1:] if opened else first.content
    head = (start_block(memory),) if memory else ()
    if not head and not rest:
        return tuple(messages[1:])
    return (Message(role="user", content=(*head, *rest)), *messages[1:])


def split_start(messages: Sequence[Message]) -> tuple[str | None, tuple[Message, ...]]:
    """The start block's text (``None`` without one) and ``messages`` without it (for the
    ``/context`` breakdown, which counts memory apart from the conversation)."""
    if not messages or not messages[0].content or not is_start_block(messages[0].content[0]):
        return None, tuple(messages)
    block = messages[0].content[0]
    assert isinstance(block, TextBlock)
    return block.text, with_start(messages, None)


def without_memory(messages: Sequence[Message], *, markers: Sequence[str]) -> tuple[Message, ...]:
    """``messages`` with every memory text taken out: the start block, and each text block
    that begins with one of ``markers`` (the openings of the change reminders and of the
    files loaded on demand). A message left without content keeps a one-line stub, so the
    roles still alternate and every ``tool_result`` stays where it was."""
    out: list[Message] = []
    for message in with_start(messages, None):
        kept = tuple(
            b
            for b in message.content
            if not (isinstance(b, TextBlock) and b.text.startswith(tuple(markers)))
        )
        if len(kept) == len(message.content):
            out.append(message)
        else:
            stub = (TextBlock(text="(memory files removed from the conversation)"),)
            out.append(Message(role=message.role, content=kept or stub))
    return tuple(out)
