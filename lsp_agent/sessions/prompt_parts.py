"""A prompt's parts (typed text, editor resources) as the user message the model gets."""

from __future__ import annotations

from collections.abc import Sequence

from lsp_agent.model.types import Message
from lsp_agent.protocol.prompt import PromptPart, PromptText


def only_text(parts: Sequence[PromptPart]) -> bool:
    """Whether the prompt is a single text part (the only shape a slash command takes)."""
    return len(parts) == 1 and isinstance(parts[0], PromptText)


def prompt_text(parts: Sequence[PromptPart]) -> str:
    """What the user typed (resources are the editor's text, not instructions)."""
    return "\n\n".join(p.text for p in parts if isinstance(p, PromptText))


def user_message(parts: Sequence[PromptPart]) -> Message:
    """The user message of a prompt: text as typed, editor resources as ``<resource>`` blocks."""
    chunks: list[str] = []
    for part in parts:
        if isinstance(part, PromptText):
            chunks.append(part.text)
        else:
            where = str(part.path)
            if part.start_line is not None:
                where += f" (lines {part.start_line}-{part.end_line or part.start_line})"
            chunks.append(f'<resource path="{where}">\n{part.text}\n</resource>')
    return Message.user_text("\n\n".join(chunks))
