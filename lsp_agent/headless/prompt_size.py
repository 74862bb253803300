"""The size check of a ``run -p`` prompt before anything is sent.

A prompt that alone cannot fit the model's context window (a large file piped on stdin) is
refused up front with the sizes, as Claude Code answers "Prompt is too long": sending it would
only come back as the API's ``prompt is too long`` error after the MCP servers started, and
compaction cannot shorten the prompt being sent.
"""

from __future__ import annotations

from lsp_agent.context.tokens import estimate_text
from lsp_agent.model.limits import limits_for


def prompt_too_long(prompt: str, *, model: str) -> str | None:
    """The error for a ``prompt`` whose estimated tokens (chars/4, the context engine's
    estimate) reach ``model``'s context window (tokens, :func:`lsp_agent.model.limits.limits_for`),
    naming both sizes; ``None`` when it may fit (the API still has the last word)."""
    tokens = estimate_text(prompt)
    window = limits_for(model).context_window
    if tokens < window:
        return None
    size = len(prompt.encode("utf-8", "surrogatepass"))
    return (
        f"Prompt is too long: about {tokens:,} tokens ({_bytes(size)}) for the "
        f"{window:,}-token context window of {model}; nothing was sent. Pipe less, or save "
        "it to a file and ask about the file (the model reads it in parts)"
    )


def _bytes(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    return f"{size / 1024:.0f} KB"
