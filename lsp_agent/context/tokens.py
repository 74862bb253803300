"""Token accounting without a tokenizer: characters / 4, corrected by the API's ``usage``.

No tokenizer that downloads vocabularies at run time is used. Instead:

- :func:`estimate_text` counts ``ceil(chars / 4)`` (the rule of thumb Anthropic documents for
  English text and code; JSON-heavy tool input counts its serialized form);
- :class:`Calibration` learns how far that estimate is from the truth: after each response,
  the prompt's real size (``usage.context_tokens``) is compared with the estimate of the same
  prompt, and later estimates are scaled by a smoothed ratio;
- :func:`next_request_tokens` predicts the size of the next request as the last response's
  exact prompt + output size plus the estimate of what was appended since (opencode's
  approach), falling back to the calibrated full estimate when the history was rewritten;
- the Messages API ``count_tokens`` endpoint gives exact figures where they matter
  (``/context``); the model client exposes it.

All counts are tokens; all text sizes are Python ``str`` lengths (code points).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from lsp_agent.model.images import image_tokens
from lsp_agent.model.types import (
    ContentBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)

CHARS_PER_TOKEN = 4
"""Characters per token of the estimate (Anthropic's rule of thumb)."""

MESSAGE_OVERHEAD = 4
"""Tokens added per message for role markers and framing (an estimate)."""

BLOCK_OVERHEAD = 3
"""Tokens added per content block (type tags, ids)."""

RATIO_BOUNDS = (0.5, 3.0)
"""A calibration ratio is kept inside these bounds: one odd response cannot derail it."""

SMOOTHING = 0.5
"""Weight of the newest observation in the calibration ratio (exponential smoothing)."""


def estimate_text(text: str) -> int:
    """Tokens of ``text`` by the chars/4 rule (0 for empty text)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def block_chars(block: ContentBlock) -> int:
    """Characters of one content block as sent (tool input as compact JSON)."""
    if isinstance(block, TextBlock):
        return len(block.text)
    if isinstance(block, ThinkingBlock):
        return len(block.thinking) + len(block.signature)
    if isinstance(block, ToolUseBlock):
        return len(block.name) + len(json.dumps(block.input, separators=(",", ":")))
    # An image counts by what the model sees of it (its pixels), in the chars/4 currency.
    return len(block.content) + sum(image_tokens(i.data) for i in block.images) * CHARS_PER_TOKEN


def estimate_block(block: ContentBlock) -> int:
    """Tokens of one content block (chars/4 plus :data:`BLOCK_OVERHEAD`)."""
    return math.ceil(block_chars(block) / CHARS_PER_TOKEN) + BLOCK_OVERHEAD


def estimate_message(message: Message) -> int:
    """Tokens of one message (its blocks plus :data:`MESSAGE_OVERHEAD`)."""
    return MESSAGE_OVERHEAD + sum(estimate_block(b) for b in message.content)


def estimate_messages(messages: Sequence[Message]) -> int:
    """Tokens of a message list."""
    return sum(estimate_message(m) for m in messages)


def estimate_tools(tools: Sequence[ToolSpec]) -> int:
    """Tokens of the tool definitions (name, description and schema as JSON)."""
    return sum(
        estimate_text(t.name + t.description + json.dumps(t.input_schema, separators=(",", ":")))
        for t in tools
    )


def estimate_system(system: Sequence[str]) -> int:
    """Tokens of the system prompt parts."""
    return sum(estimate_text(part) for part in system)


def estimate_request(
    *,
    system: Sequence[str],
    tools: Sequence[ToolSpec],
    messages: Sequence[Message],
    cache: EstimateCache | None = None,
) -> int:
    """Uncalibrated tokens of a whole request prompt (tools + system + messages); with
    ``cache``, messages and tool definitions estimated by an earlier call are not counted
    again (same result)."""
    if cache is None:
        return estimate_tools(tools) + estimate_system(system) + estimate_messages(messages)
    return cache.tools(tools) + estimate_system(system) + cache.messages(messages)


@dataclass(kw_only=True)
class EstimateCache:
    """Token estimates of the messages and tool definitions of the last request, so the next
    request of a growing history only estimates what is new (one session's event loop).

    Keyed by object identity: messages and tool specs are frozen, and each entry keeps its
    object alive, so an id cannot be reused while its entry exists. A history that extends the
    last one is counted as the last total plus the new messages; any other keeps only the
    entries of the objects it was given (the size follows the history; a rewritten history,
    after clearing or compaction, is estimated afresh)."""

    _messages: dict[int, tuple[Message, int]] = field(default_factory=dict)
    _tools: dict[int, tuple[ToolSpec, int]] = field(default_factory=dict)
    _last: tuple[Message, ...] = ()
    """The messages of the last call, whose entries :attr:`_messages` holds, and their total."""
    _total: int = 0

    def messages(self, messages: Sequence[Message]) -> int:
        """:func:`estimate_messages` of ``messages`` (tokens)."""
        current = tuple(messages)
        last = self._last
        if last and len(current) >= len(last) and current[: len(last)] == last:
            # The usual request: the last one's history with messages appended. The tuple
            # comparison runs in C and finds each kept message by identity.
            total = self._total
            for message in current[len(last) :]:
                tokens = estimate_message(message)
                self._messages[id(message)] = (message, tokens)
                total += tokens
            self._last, self._total = current, total
            return total
        old, new = self._messages, {}
        total = 0
        for message in current:
            hit = old.get(id(message))
            tokens = hit[1] if hit is not None and hit[0] is message else estimate_message(message)
            new[id(message)] = (message, tokens)
            total += tokens
        self._messages, self._last, self._total = new, current, total
        return total

    def tools(self, tools: Sequence[ToolSpec]) -> int:
        """:func:`estimate_tools` of ``tools`` (tokens)."""
        old, new = self._tools, {}
        total = 0
        for tool in tools:
            hit = old.get(id(tool))
            tokens = hit[1] if hit is not None and hit[0] is tool else estimate_tools((tool,))
            new[id(tool)] = (tool, tokens)
            total += tokens
        self._tools = new
        return total


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """How real token counts compare with the chars/4 estimate. ``ratio`` = real / estimated,
    smoothed over responses (starts at 1.0)."""

    ratio: float = 1.0

    def observe(self, *, estimated: int, actual: int) -> Calibration:
        """A calibration that also accounts for one request whose prompt was ``estimated``
        tokens by chars/4 and ``actual`` tokens by the API's ``usage``. Ignores empty prompts."""
        if estimated <= 0 or actual <= 0:
            return self
        low, high = RATIO_BOUNDS
        seen = min(high, max(low, actual / estimated))
        return Calibration(ratio=(1 - SMOOTHING) * self.ratio + SMOOTHING * seen)

    def apply(self, estimated: int) -> int:
        """``estimated`` scaled by the ratio (rounded up)."""
        return math.ceil(estimated * self.ratio)


@dataclass(frozen=True, kw_only=True)
class Observed:
    """The last exact size the API reported: the prompt of a request that held the first
    ``messages`` messages of the history, plus that response's output (tokens)."""

    messages: int
    tokens: int

    @classmethod
    def from_usage(cls, *, messages: int, usage: Usage) -> Observed:
        """From a response's ``usage`` to a request of ``messages`` messages."""
        return cls(messages=messages, tokens=usage.context_tokens + usage.output_tokens)


def next_request_tokens(
    *,
    system: Sequence[str],
    tools: Sequence[ToolSpec],
    messages: Sequence[Message],
    observed: Observed | None,
    calibration: Calibration,
) -> int:
    """Predicted prompt size (tokens) of a request carrying ``messages``.

    With an :class:`Observed` size of a request whose messages are a prefix of ``messages``,
    the prediction is that exact size plus the calibrated estimate of the messages appended
    since (the response counted in ``observed`` is one of them, so its estimate is skipped).
    Otherwise (no observation, or a history now shorter, e.g. after compaction) it is the
    calibrated estimate of the whole request.
    """
    if observed is not None and 0 < observed.messages <= len(messages):
        # messages[observed.messages] is the response already counted as output.
        appended = messages[observed.messages + 1 :]
        return observed.tokens + calibration.apply(estimate_messages(appended))
    return calibration.apply(estimate_request(system=system, tools=tools, messages=messages))
