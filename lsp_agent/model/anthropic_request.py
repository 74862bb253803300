"""Request mapping for the Anthropic Messages API: our :class:`~lsp_agent.model.types.ModelRequest`
as the keyword arguments of ``messages.create`` (Messages API reference, prompt-caching guide).

- cache breakpoints (``cache_control: ephemeral``; the API allows four): the first and the last
  ``system`` part (the static prompt, shared by every session, and the session's environment),
  the first block of the first message (the conversation's start block: the memory files), and
  the last cacheable block of the last message (thinking blocks cannot carry it, and empty text
  blocks are dropped because the API rejects them). A read hits the longest cached prefix, so
  each request reuses everything the previous one sent and writes only the new turn.
- tools keep their order (name, description, input_schema); the cache prefix covers them
  because the API orders the prompt tools → system → messages.
- lone UTF-16 surrogates are replaced, and a request over :data:`REQUEST_LIMIT_BYTES` is refused
  before it is sent.

Pure data: nothing here imports the SDK.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lsp_agent.model.base import ModelError
from lsp_agent.model.types import (
    ContentBlock,
    Message,
    ModelRequest,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


_CACHE = {"type": "ephemeral"}


REQUEST_LIMIT_BYTES = 32_000_000
"""The Messages API's request size limit (bytes; "Request size limits" in the API docs: 32 MB,
answered with HTTP 413 ``request_too_large``)."""


def _block_param(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    param: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": block.tool_use_id,
        "content": block.content,
    }
    if block.images:
        text = [{"type": "text", "text": block.content}] if block.content else []
        param["content"] = text + [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": i.media_type, "data": i.data},
            }
            for i in block.images
        ]
    if block.is_error:
        param["is_error"] = True
    return param


def _message_param(message: Message) -> dict[str, Any]:
    blocks = [_block_param(b) for b in message.content]
    # The API rejects empty text blocks; keep one only if it is all the message has.
    kept = [b for b in blocks if not (b["type"] == "text" and not b["text"])]
    return {"role": message.role, "content": kept or blocks}


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(value: Any) -> Any:
    """``value`` with lone UTF-16 surrogates replaced by U+FFFD.

    They cannot be encoded as UTF-8, so one of them anywhere in the history (a model reply,
    a tool result from undecodable bytes) would make every later request of the session fail.
    """
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value) if _LONE_SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {k: _without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    return value


ConvertedMessages = dict[int, tuple[Message, dict[str, Any]]]
"""Messages already converted to API form, by ``id`` of the (frozen) message; the message is
held too, so that its ``id`` cannot be reused while the entry lives."""


def convert_messages(
    messages: Sequence[Message], previous: ConvertedMessages
) -> tuple[list[dict[str, Any]], ConvertedMessages]:
    """``messages`` in API form (lone surrogates replaced), reusing the conversions in
    ``previous``: the history only grows between requests, so each message is converted once
    rather than at every request. Returns the converted list and the conversions of exactly
    these messages (for the next call). The returned dicts are shared: do not modify them."""
    converted: ConvertedMessages = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        entry = previous.get(id(message))
        if entry is None or entry[0] is not message:
            entry = (message, _without_lone_surrogates(_message_param(message)))
        converted[id(message)] = entry
        out.append(entry[1])
    return out, converted


FirstMarks = dict[int, tuple[dict[str, Any], dict[str, Any]]]
"""The first message with its cache breakpoint, by ``id`` of the converted message it was
made from (held with it): the first message stays the same for a whole conversation, so its
marked copy (and the JSON the body keeps for that object) can be reused by every request."""


def to_api_params(
    request: ModelRequest,
    *,
    converted: Sequence[dict[str, Any]] | None = None,
    first_marks: FirstMarks | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` for ``request`` (JSON-ready dicts;
    ``stream`` not included). See the module doc for the cache breakpoints. ``converted``:
    the request's messages already in API form (:func:`convert_messages`); they are not
    modified. ``first_marks``: the caller's store of the marked first message, reused while
    the first converted message is the same object and updated otherwise."""
    if converted is None:
        converted = [_without_lone_surrogates(_message_param(m)) for m in request.messages]
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": list(converted),
    }
    if request.system:
        system: list[dict[str, Any]] = [{"type": "text", "text": part} for part in request.system]
        system[0]["cache_control"] = dict(_CACHE)
        system[-1]["cache_control"] = dict(_CACHE)
        params["system"] = system
    if request.tools:
        params["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ]
    if params["messages"]:
        _mark_first(params["messages"], first_marks)
        _mark(params["messages"], -1, first=False)
    if request.thinking_budget is not None:
        params["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
    return params


def _mark_first(messages: list[dict[str, Any]], kept: FirstMarks | None) -> None:
    """:func:`_mark` of the first message, reusing the copy in ``kept`` for the same message."""
    source = messages[0]
    entry = kept.get(id(source)) if kept is not None else None
    if entry is not None and entry[0] is source:
        messages[0] = entry[1]
        return
    _mark(messages, 0, first=True)
    if kept is not None:
        kept.clear()
        kept[id(source)] = (source, messages[0])


def _mark(messages: list[dict[str, Any]], position: int, *, first: bool) -> None:
    """Put a breakpoint on the first (``first``) or last cacheable block of
    ``messages[position]``. The message is replaced by a copy: the converted messages are
    shared between requests, and the breakpoints move on with the next one."""
    message = dict(messages[position])
    content = message["content"] = list(message["content"])
    indexes = range(len(content)) if first else reversed(range(len(content)))
    for index in indexes:
        block = content[index]
        if block["type"] != "thinking" and not (block["type"] == "text" and not block["text"]):
            content[index] = {**block, "cache_control": dict(_CACHE)}
            break
    messages[position] = message


def refuse_oversized(params: Mapping[str, Any], endpoint: str) -> int:
    """The request body's size (bytes, as JSON); raises :class:`ModelError` (status 413) when
    it would exceed :data:`REQUEST_LIMIT_BYTES`: it is refused before it is sent."""
    size = len(json.dumps(params, default=str).encode("utf-8", "surrogatepass"))
    return check_size(size, endpoint)


def check_size(size: int, endpoint: str) -> int:
    """``size`` (bytes of a request body); raises :class:`ModelError` (status 413) when it
    exceeds :data:`REQUEST_LIMIT_BYTES`: such a request is refused before it is sent."""
    if size > REQUEST_LIMIT_BYTES:
        raise ModelError(
            f"The request is {size:,} bytes; the model endpoint {endpoint} accepts at most "
            f"{REQUEST_LIMIT_BYTES:,} bytes (HTTP 413 request_too_large). It was not sent.",
            status=413,
        )
    return size
