"""Response mapping for the Anthropic Messages API: the SDK's raw stream events become our
stream events and the final :class:`~lsp_agent.model.types.AssistantResponse`.

Text, thinking (with signature) and tool_use blocks are kept; other block types are skipped, and
the ``index`` of every stream event is the block's position in the final content. A tool_use
whose streamed input is not a JSON object gets the input ``{"__invalid_json__": "<raw text>"}``
(:data:`INVALID_JSON_KEY`); a tool_use id sent twice in one response gets a distinct id.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsp_agent.model.types import (
    AssistantResponse,
    ContentBlock,
    ModelStreamEvent,
    StopReason,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolInputDelta,
    ToolUseBlock,
    ToolUseStart,
    Usage,
)

if TYPE_CHECKING:
    from anthropic.types import RawMessageStreamEvent

log = logging.getLogger(__name__)


INVALID_JSON_KEY = "__invalid_json__"
"""Key of the stand-in input of a tool_use whose input was not a JSON object (value: raw text)."""


_STOP_REASONS: frozenset[str] = frozenset(
    {
        "end_turn",
        "max_tokens",
        "stop_sequence",
        "tool_use",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
    }
)


def _tool_input(raw: str, initial: object) -> dict[str, Any]:
    if not raw.strip():
        return dict(initial) if isinstance(initial, dict) else {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):  # nesting deeper than the parser goes: not usable
        return {INVALID_JSON_KEY: raw}
    return value if isinstance(value, dict) else {INVALID_JSON_KEY: raw}


@dataclass(kw_only=True)
class _Block:
    kind: str  # "text" | "thinking" | "tool_use"
    position: int  # index in the final content, reported in stream events
    text: list[str] = field(default_factory=list)
    signature: str = ""
    tool_id: str = ""
    tool_name: str = ""
    initial_input: object = None

    def finish(self) -> ContentBlock:
        joined = "".join(self.text)
        if self.kind == "text":
            return TextBlock(text=joined)
        if self.kind == "thinking":
            return ThinkingBlock(thinking=joined, signature=self.signature)
        return ToolUseBlock(
            id=self.tool_id, name=self.tool_name, input=_tool_input(joined, self.initial_input)
        )


def _stop_reason(value: str | None) -> StopReason | None:
    if value is None:
        return None
    if value in _STOP_REASONS:
        return value  # type: ignore[return-value]  # checked against the Literal's values
    log.warning("unknown stop_reason %r from the model; treated as none", value)
    return None


class Accumulator:
    """Turns raw SSE events into our stream events and the final response."""

    def __init__(self, *, observer: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.observer = observer
        """Gets every server-sent event as JSON (``AnthropicModel.raw_events``)."""
        self.blocks: dict[int, _Block] = {}  # by API index; skipped blocks are absent
        self.order: list[_Block] = []
        self.model = ""
        self.message_id = ""
        self.stop_reason: str | None = None
        self.usage: dict[str, int] = {}
        self.finished = False
        self.tool_ids: set[str] = set()

    def feed(self, event: RawMessageStreamEvent) -> list[ModelStreamEvent]:
        if self.observer is not None:
            self.observer(event.model_dump(mode="json", exclude_none=True))
        if event.type == "message_start":
            self.model = event.message.model
            self.message_id = event.message.id or ""
            u = event.message.usage
            self.usage = {
                "input_tokens": u.input_tokens,
                "output_tokens": u.output_tokens,
                "cache_creation_input_tokens": u.cache_creation_input_tokens or 0,
                "cache_read_input_tokens": u.cache_read_input_tokens or 0,
            }
        elif event.type == "content_block_start":
            return self._start(event.index, event.content_block)
        elif event.type == "content_block_delta":
            block = self.blocks.get(event.index)
            if block is None:
                return []
            d = event.delta
            if d.type == "text_delta" and block.kind == "text":
                block.text.append(d.text)
                return [TextDelta(index=block.position, text=d.text)]
            if d.type == "thinking_delta" and block.kind == "thinking":
                block.text.append(d.thinking)
                return [ThinkingDelta(index=block.position, thinking=d.thinking)]
            if d.type == "signature_delta" and block.kind == "thinking":
                block.signature += d.signature
            elif d.type == "input_json_delta" and block.kind == "tool_use":
                block.text.append(d.partial_json)
                if d.partial_json:
                    return [ToolInputDelta(index=block.position, partial_json=d.partial_json)]
        elif event.type == "message_delta":
            self.stop_reason = event.delta.stop_reason
            du = event.usage
            self.usage["output_tokens"] = du.output_tokens
            for key, value in (
                ("input_tokens", du.input_tokens),
                ("cache_creation_input_tokens", du.cache_creation_input_tokens),
                ("cache_read_input_tokens", du.cache_read_input_tokens),
            ):
                if value is not None:
                    self.usage[key] = value
        elif event.type == "message_stop":
            self.finished = True
        return []

    def _start(self, index: int, content_block: Any) -> list[ModelStreamEvent]:
        kind = getattr(content_block, "type", None)
        if kind not in ("text", "thinking", "tool_use"):
            log.debug("skipping content block of type %r", kind)
            return []
        block = _Block(kind=kind, position=len(self.order))
        self.blocks[index] = block
        self.order.append(block)
        if kind == "text":
            if content_block.text:
                block.text.append(content_block.text)
                return [TextDelta(index=block.position, text=content_block.text)]
        elif kind == "thinking":
            block.signature = content_block.signature or ""
            if content_block.thinking:
                block.text.append(content_block.thinking)
                return [ThinkingDelta(index=block.position, thinking=content_block.thinking)]
        else:
            block.tool_id = _unique_id(str(content_block.id), self.tool_ids)
            self.tool_ids.add(block.tool_id)
            block.tool_name = content_block.name
            block.initial_input = content_block.input
            return [ToolUseStart(index=block.position, id=block.tool_id, name=block.tool_name)]
        return []

    def response(self) -> AssistantResponse:
        return AssistantResponse(
            content=tuple(b.finish() for b in self.order),
            stop_reason=_stop_reason(self.stop_reason),
            usage=Usage(**self.usage),
            model=self.model,
            id=self.message_id,
        )


def _unique_id(tool_id: str, seen: set[str]) -> str:
    """``tool_id``, or a fresh variant when this response already used it: two tool_use blocks
    with one id would get two tool_results for that id, which the API rejects in every later
    request of the session (a faulty or hostile endpoint)."""
    if tool_id not in seen:
        return tool_id
    n = 2
    while f"{tool_id}_dup{n}" in seen:
        n += 1
    log.warning(
        "the model endpoint sent tool_use id %s twice; renamed to %s_dup%d", tool_id, tool_id, n
    )
    return f"{tool_id}_dup{n}"
