"""Prompt parts: what a door hands to :meth:`Session.prompt` as the user's turn.

A door builds them from its own payload (LSP ``ContentBlock`` arrays, ``run -p`` text, code
action templates); the session turns them into the model's user message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, kw_only=True)
class PromptText:
    """A text part of a user prompt."""

    text: str


@dataclass(frozen=True, kw_only=True)
class PromptResource:
    """An embedded resource (an @-mention or selection): ``path`` is absolute, ``text`` is the
    buffer text (possibly unsaved), ``start_line``/``end_line`` are 1-based when a range was
    selected."""

    path: Path
    text: str
    start_line: int | None = None
    end_line: int | None = None


PromptPart = PromptText | PromptResource
