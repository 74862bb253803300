"""MCP tool results as text for the model, capped.

Text content is passed on; structured content is shown as JSON when the result carries no
text; images and audio are described (the tool_result the model gets is text); resource links
and embedded resources show their URI and, for text resources, their text. A result over the
cap (:class:`~lsp_agent.mcp.limits.McpLimits.max_output_tokens`) is cut with a notice telling
the model how to get less; over the warning size a line is logged.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from lsp_agent.mcp.limits import CHARS_PER_TOKEN, McpLimits

log = logging.getLogger(__name__)


def _attr(item: Any, name: str, default: Any = None) -> Any:
    return getattr(item, name, default)


def _describe(item: Any) -> str:
    kind = _attr(item, "type")
    if kind == "text":
        return str(_attr(item, "text", ""))
    if kind in ("image", "audio"):
        data = _attr(item, "data", "") or ""
        size = len(data) * 3 // 4
        return f"[{kind} {_attr(item, 'mime_type', '?')}, about {size} bytes, not shown]"
    if kind == "resource_link":
        name = _attr(item, "name", "")
        return f"[resource link {name}: {_attr(item, 'uri', '')}]"
    if kind == "resource":
        resource = _attr(item, "resource")
        uri = _attr(resource, "uri", "")
        text = _attr(resource, "text")
        if isinstance(text, str):
            return f'<resource uri="{uri}">\n{text}\n</resource>'
        return f"[binary resource {uri} ({_attr(resource, 'mime_type', '?')}), not shown]"
    return f"[{kind} content, not shown]"


def result_text(result: Any) -> str:
    """The model-facing text of a ``CallToolResult`` (before capping)."""
    parts = [_describe(item) for item in _attr(result, "content", []) or []]
    structured = _attr(result, "structured_content")
    if structured is not None and not any(
        _attr(i, "type") == "text" for i in _attr(result, "content", []) or []
    ):
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2, default=str))
    return "\n".join(parts) if parts else "(no output)"


def cap_text(text: str, *, limits: McpLimits, tool: str) -> str:
    """``text`` cut to ``limits.max_output_tokens`` (estimated) with a notice; logs results
    above ``limits.warn_output_tokens``."""
    tokens = len(text) // CHARS_PER_TOKEN
    if tokens >= limits.warn_output_tokens:
        log.warning("MCP tool %s returned about %d tokens", tool, tokens)
    cap = limits.max_output_tokens * CHARS_PER_TOKEN
    if len(text) <= cap:
        return text
    return (
        text[:cap] + f"\n\n[Output truncated: {tool} returned about {tokens} tokens; the limit is "
        f"{limits.max_output_tokens} (MAX_MCP_OUTPUT_TOKENS). Ask the tool for less, e.g. "
        "with a narrower query or pagination.]"
    )
