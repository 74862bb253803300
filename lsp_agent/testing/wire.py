"""What the scripted server checks in a request and how it renders an answer.

Pure functions over :mod:`lsp_agent.testing.scenario` models: :func:`check_expect` compares a
``/v1/messages`` request body with a step's ``expect``; :func:`render_message` and
:func:`render_events` turn a scripted response into a JSON ``Message`` or the SSE events of a
stream; :func:`error_body` is the Messages API error JSON.

Event and body shapes follow the Messages API streaming reference
(``message_start``, ``content_block_start``/``_delta``/``_stop``, ``message_delta``,
``message_stop``; deltas ``text_delta``, ``thinking_delta``, ``signature_delta``,
``input_json_delta``) and its error reference (``{"type": "error", "error": {...}}``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lsp_agent.testing.scenario import (
    Expect,
    ScriptedError,
    ScriptedResponse,
    ScriptedText,
    ScriptedThinking,
    ScriptedToolUse,
)

# ---- checking requests ------------------------------------------------------------------------


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _tool_result_text(block: Mapping[str, Any]) -> str:
    return "\n".join(b.get("text", "") for b in _blocks(block.get("content", "")))


def _last_user_message(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return message
    return None


def user_message_text(message: Mapping[str, Any]) -> str:
    """The text of a request message: its text blocks and tool_result contents, one per line."""
    parts: list[str] = []
    for block in _blocks(message.get("content")):
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(_tool_result_text(block))
    return "\n".join(parts)


def _system_text(body: Mapping[str, Any]) -> str:
    return "\n".join(str(b.get("text", "")) for b in _blocks(body.get("system")))


def _short(value: str, limit: int = 200) -> str:
    return value if len(value) <= limit else value[:limit] + f"... ({len(value)} chars)"


def _whole_request_problems(expect: Expect, body: Mapping[str, Any]) -> list[str]:
    """``request_contains`` / ``request_lacks`` checked on the system prompt and messages."""
    if expect.request_contains is None and expect.request_lacks is None:
        return []
    whole = json.dumps({"system": body.get("system"), "messages": body.get("messages")})
    problems = []
    if expect.request_contains is not None and expect.request_contains not in whole:
        problems.append(f"the request lacks {expect.request_contains!r}")
    if expect.request_lacks is not None and expect.request_lacks in whole:
        problems.append(f"the request contains {expect.request_lacks!r}")
    return problems


def check_expect(expect: Expect | None, body: Mapping[str, Any]) -> list[str]:
    """The ways request ``body`` (parsed ``/v1/messages`` JSON) differs from ``expect``;
    empty when it matches."""
    if expect is None:
        return []
    problems: list[str] = []
    tools = body.get("tools") if isinstance(body.get("tools"), list) else []
    names = [t.get("name") for t in tools or [] if isinstance(t, dict)]
    missing = [n for n in expect.tools_include if n not in names]
    if missing:
        problems.append(f"tools {missing} not offered (request offers {names})")
    if expect.stream is not None and bool(body.get("stream")) != expect.stream:
        problems.append(f"stream is {bool(body.get('stream'))}, expected {expect.stream}")
    if expect.max_tokens_at_least is not None:
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or max_tokens < expect.max_tokens_at_least:
            problems.append(
                f"max_tokens is {max_tokens!r}, expected at least {expect.max_tokens_at_least}"
            )
    if expect.system_contains is not None and expect.system_contains not in _system_text(body):
        problems.append(
            f"system prompt lacks {expect.system_contains!r} "
            f"(system: {_short(_system_text(body))!r})"
        )
    problems += _whole_request_problems(expect, body)
    last_user = _last_user_message(body)
    if expect.last_user_contains is not None:
        user_text = user_message_text(last_user) if last_user is not None else ""
        if expect.last_user_contains not in user_text:
            problems.append(
                f"last user message lacks {expect.last_user_contains!r} "
                f"(it reads {_short(user_text)!r})"
            )
    if expect.tool_results is not None:
        results = [
            b
            for b in _blocks(last_user.get("content") if last_user is not None else None)
            if b.get("type") == "tool_result"
        ]
        if len(results) != len(expect.tool_results):
            problems.append(
                f"last user message has {len(results)} tool_result blocks, "
                f"expected {len(expect.tool_results)}"
            )
        for i, (want, got) in enumerate(zip(expect.tool_results, results, strict=False)):
            is_error = bool(got.get("is_error", False))
            if want.is_error is not None and is_error != want.is_error:
                problems.append(
                    f"tool_result {i} has is_error={is_error}, expected {want.is_error}"
                )
            content = _tool_result_text(got)
            if want.contains is not None and want.contains not in content:
                problems.append(
                    f"tool_result {i} lacks {want.contains!r} (it reads {_short(content)!r})"
                )
    return problems


# ---- rendering answers ------------------------------------------------------------------------

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def error_body(error_type: str, message: str, *, request_id: str | None = None) -> dict[str, Any]:
    """The Messages API error JSON: ``{"type": "error", "error": {"type", "message"}}``."""
    body: dict[str, Any] = {"type": "error", "error": {"type": error_type, "message": message}}
    if request_id is not None:
        body["request_id"] = request_id
    return body


def error_type_for(err: ScriptedError) -> str:
    """``err.type``, or the API's error type for ``err.status`` (``api_error`` for other 5xx,
    ``invalid_request_error`` for other 4xx)."""
    if err.type:
        return err.type
    return _ERROR_TYPES.get(
        err.status, "api_error" if err.status >= 500 else "invalid_request_error"
    )


def _tool_use_id(block: ScriptedToolUse, step: int | str, index: int) -> str:
    return block.id or f"toolu_scripted_{step}_{index}"


def _tool_input_json(block: ScriptedToolUse) -> str:
    return block.input_json if block.input_json is not None else json.dumps(block.input)


def _output_chars(response: ScriptedResponse) -> int:
    total = 0
    for b in response.content:
        if isinstance(b, ScriptedText):
            total += len(b.text)
        elif isinstance(b, ScriptedThinking):
            total += len(b.thinking)
        elif isinstance(b, ScriptedToolUse):
            total += len(_tool_input_json(b))
    return total


def _usage(response: ScriptedResponse, request_bytes: int) -> dict[str, int]:
    u = response.usage
    return {
        "input_tokens": u.input_tokens
        if u.input_tokens is not None
        else max(1, request_bytes // 4),
        "output_tokens": (
            u.output_tokens if u.output_tokens is not None else max(1, _output_chars(response) // 4)
        ),
        "cache_creation_input_tokens": u.cache_creation_input_tokens or 0,
        "cache_read_input_tokens": u.cache_read_input_tokens or 0,
    }


def _stop_reason(response: ScriptedResponse) -> str:
    if response.stop_reason is not None:
        return response.stop_reason
    has_tool_use = any(isinstance(b, ScriptedToolUse) for b in response.content)
    return "tool_use" if has_tool_use else "end_turn"


def _content_json(response: ScriptedResponse, step: int | str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, b in enumerate(response.content):
        if isinstance(b, ScriptedText):
            out.append({"type": "text", "text": b.text})
        elif isinstance(b, ScriptedThinking):
            out.append({"type": "thinking", "thinking": b.thinking, "signature": b.signature})
        elif isinstance(b, ScriptedToolUse):
            parsed = json.loads(_tool_input_json(b))  # ValueError for invalid input_json
            if not isinstance(parsed, dict):
                raise ValueError("tool_use input_json is not a JSON object")
            out.append(
                {
                    "type": "tool_use",
                    "id": _tool_use_id(b, step, i),
                    "name": b.name,
                    "input": parsed,
                }
            )
        else:
            out.append(dict(b.content_block))
    return out


def render_message(
    response: ScriptedResponse, *, step: int | str, request_model: str, request_bytes: int
) -> dict[str, Any]:
    """The JSON ``Message`` for a non-streaming request.

    Raises ``ValueError`` when a tool_use's ``input_json`` is not a JSON object (only a stream
    can carry broken JSON).
    """
    return {
        "id": f"msg_scripted_{step}",
        "type": "message",
        "role": "assistant",
        "model": response.model or request_model,
        "content": _content_json(response, step),
        "stop_reason": _stop_reason(response),
        "stop_sequence": None,
        "usage": _usage(response, request_bytes),
    }


def _pieces(value: str, size: int) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


SseEvent = tuple[str, dict[str, Any]]
"""One server-sent event: (event name, data object)."""


def render_events(
    response: ScriptedResponse,
    *,
    step: int | str,
    request_model: str,
    request_bytes: int,
    chunk_chars: int,
) -> list[SseEvent]:
    """The SSE events of a streamed response, in wire order: ``message_start``, ``ping``, per
    block ``content_block_start`` / deltas of ``chunk_chars`` characters /
    ``content_block_stop``, then ``message_delta`` and ``message_stop``."""
    usage = _usage(response, request_bytes)
    events: list[SseEvent] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_scripted_{step}",
                    "type": "message",
                    "role": "assistant",
                    "model": response.model or request_model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**usage, "output_tokens": 1},
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]

    def delta(index: int, payload: dict[str, Any]) -> SseEvent:
        return (
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": payload},
        )

    for i, b in enumerate(response.content):
        if isinstance(b, ScriptedText):
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [
                delta(i, {"type": "text_delta", "text": p}) for p in _pieces(b.text, chunk_chars)
            ]
        elif isinstance(b, ScriptedThinking):
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                delta(i, {"type": "thinking_delta", "thinking": p})
                for p in _pieces(b.thinking, chunk_chars)
            ]
            deltas.append(delta(i, {"type": "signature_delta", "signature": b.signature}))
        elif isinstance(b, ScriptedToolUse):
            start = {
                "type": "tool_use",
                "id": _tool_use_id(b, step, i),
                "name": b.name,
                "input": {},
            }
            # The API opens every tool input with an empty partial_json.
            deltas = [delta(i, {"type": "input_json_delta", "partial_json": ""})]
            payload = _tool_input_json(b)
            if payload:
                deltas += [
                    delta(i, {"type": "input_json_delta", "partial_json": p})
                    for p in _pieces(payload, chunk_chars)
                ]
        else:
            start = dict(b.content_block)
            deltas = []
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": start},
            )
        )
        events += deltas
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_reason(response), "stop_sequence": None},
                "usage": usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events
