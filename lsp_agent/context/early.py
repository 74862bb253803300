"""The summary prepared ahead of time: when the history passes :data:`EARLY_FRACTION` of the
compaction threshold, the summary request is sent in the background
(:mod:`lsp_agent.model.background`) for the history as it is then. When the threshold is
reached and that summary is ready, the compaction uses it and keeps the messages that came
after its starting point verbatim after it — the switch costs no model round trip. When it is
not ready, it is cancelled and the normal path runs; a failed, empty or oversized one is
dropped and changes nothing.

Pure helpers and the plain record of one prepared summary; the engine
(:mod:`lsp_agent.context.engine`) decides when to start and when to use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from lsp_agent.model.background import BackgroundResult
from lsp_agent.model.types import Message, ToolResultBlock

EARLY_FRACTION = 0.7
"""Share of the compaction threshold (prompt tokens) past which the summary is prepared."""


@dataclass(kw_only=True)
class EarlySummary:
    """A summary requested in the background: ``covered`` is the history it summarises (the
    prefix of the history at the time it was started), ``prompts`` how many of the user's
    messages that history held; ``task`` resolves to the answer (``None``: it failed)."""

    task: asyncio.Task[BackgroundResult | None]
    covered: tuple[Message, ...]
    prompts: int

    def cancel(self) -> None:
        """Stop the request if it still runs (idempotent)."""
        if not self.task.done():
            self.task.cancel()

    def failed(self) -> bool:
        """Whether the request ended without a usable answer (so no other is started until
        the next compaction)."""
        if not self.task.done():
            return False
        return self.task.cancelled() or self.task.result() is None

    def text(self) -> str | None:
        """The summary when the request finished with an answer (``None``: not ready, or
        failed)."""
        if not self.task.done() or self.task.cancelled():
            return None
        result = self.task.result()
        return result.text if result is not None else None


@dataclass(frozen=True, kw_only=True)
class Ready:
    """A prepared summary that fits the history now: the ``summary``, the messages after its
    starting point (``tail``, kept verbatim), the history it replaces (``covered``) and how
    many of the user's messages that history held (``prompts``)."""

    summary: str
    tail: tuple[Message, ...]
    covered: tuple[Message, ...]
    prompts: int


def tail_after(
    covered: Sequence[Message], current: Sequence[Message]
) -> tuple[Message, ...] | None:
    """The messages of ``current`` after the prefix ``covered``; ``None`` when ``current``
    does not start with it (``/clear``, a rewind, a compaction, a prompt merged into the last
    message) or the tail would not start with an assistant message (then pairing could break).
    Tool results cleared since count as the same message."""
    if len(current) < len(covered):
        return None
    for new, old in zip(current, covered, strict=False):
        if not _same(new, old):
            return None
    tail = tuple(current[len(covered) :])
    if tail and tail[0].role != "assistant":
        return None
    return tail


def _same(new: Message, old: Message) -> bool:
    if new is old or new == old:
        return True
    if new.role != old.role or len(new.content) != len(old.content):
        return False
    for a, b in zip(new.content, old.content, strict=True):
        if a == b:
            continue
        cleared = (
            isinstance(a, ToolResultBlock)
            and isinstance(b, ToolResultBlock)
            and a.tool_use_id == b.tool_use_id
        )
        if not cleared:
            return False
    return True
