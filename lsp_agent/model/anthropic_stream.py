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
from typing import Any

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


def _str(value: object) -> str:
    """``value`` when it is a string, else ``""`` (a field the endpoint sent in the wrong shape
    or left out)."""
    return value if isinstance(value, str) else ""


def _int(value: object) -> int | None:
    """``value`` when it is an integer (not a bool), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


class Accumulator:
    """Turns the stream's events (each the JSON object of one server-sent event's ``data``, as
    the Messages API documents it) into our stream events and the final response. A field of
    the wrong type counts as absent: a faulty endpoint gives a short or empty answer, never a
    crash."""

    def __init__(self, *, observer: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.observer = observer
        """Gets every server-sent event as JSON (``AnthropicModel.raw_events``)."""
        self.blocks: dict[int, _Block] = {}  # by API index; skipped blocks are absent
        self.order: list[_Block] = []
        self.model = ""
        self.message_id = ""
        self.stop_reason: str | None = None
        self.usage: dict[str, int] = dict.fromkeys(_USAGE_KEYS, 0)
        self.finished = False
        self.tool_ids: set[str] = set()

    def feed(self, event: object) -> list[ModelStreamEvent]:
        """Our events for one server-sent event (``event``: its JSON ``data``)."""
        if not isinstance(event, dict):
            return []
        if self.observer is not None:
            self.observer(event)
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_start":
            index = _int(event.get("index"))
            return [] if index is None else self._start(index, _dict(event.get("content_block")))
        if kind == "message_start":
            message = _dict(event.get("message"))
            self.model = _str(message.get("model"))
            self.message_id = _str(message.get("id"))
            usage = _dict(message.get("usage"))
            for key in _USAGE_KEYS:
                self.usage[key] = _int(usage.get(key)) or 0
        elif kind == "message_delta":
            stop = _dict(event.get("delta")).get("stop_reason")
            self.stop_reason = stop if isinstance(stop, str) else None
            usage = _dict(event.get("usage"))
            for key in _USAGE_KEYS:
                value = _int(usage.get(key))
                if value is not None:
                    self.usage[key] = value
        elif kind == "message_stop":
            self.finished = True
        return []

    def _delta(self, event: dict[str, Any]) -> list[ModelStreamEvent]:
        index = _int(event.get("index"))
        block = self.blocks.get(index) if index is not None else None
        if block is None:
            return []
        d = _dict(event.get("delta"))
        kind = d.get("type")
        if kind == "text_delta" and block.kind == "text":
            text = _str(d.get("text"))
            block.text.append(text)
            return [TextDelta(index=block.position, text=text)]
        if kind == "thinking_delta" and block.kind == "thinking":
            thinking = _str(d.get("thinking"))
            block.text.append(thinking)
            return [ThinkingDelta(index=block.position, thinking=thinking)]
        if kind == "signature_delta" and block.kind == "thinking":
            block.signature += _str(d.get("signature"))
        elif kind == "input_json_delta" and block.kind == "tool_use":
            partial = _str(d.get("partial_json"))
            block.text.append(partial)
            if partial:
                return [ToolInputDelta(index=block.position, partial_json=partial)]
        return []

    def _start(self, index: int, content_block: dict[str, Any]) -> list[ModelStreamEvent]:
        kind = content_block.get("type")
        if kind not in ("text", "thinking", "tool_use"):
            log.debug("skipping content block of type %r", kind)
            return []
        block = _Block(kind=kind, position=len(self.order))
        self.blocks[index] = block
        self.order.append(block)
        if kind == "text":
            text = _str(content_block.get("text"))
            if text:
                block.text.append(text)
                return [TextDelta(index=block.position, text=text)]
        elif kind == "thinking":
            block.signature = _str(content_block.get("signature"))
            thinking = _str(content_block.get("thinking"))
            if thinking:
                block.text.append(thinking)
                return [ThinkingDelta(index=block.position, thinking=thinking)]
        else:
            block.tool_id = _unique_id(str(content_block.get("id")), self.tool_ids)
            self.tool_ids.add(block.tool_id)
            block.tool_name = _str(content_block.get("name"))
            block.initial_input = content_block.get("input")
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
