"""MCP tool results as what the model gets: text plus image blocks, capped.

- text content is passed on;
- images of a type the Messages API accepts (PNG, JPEG, GIF, WebP, at most 5 MB) become image
  blocks after the text, under the type their bytes have (a server's declared type is not
  trusted; data that is not base64 or not such an image is described, never sent), and the
  text names each one where it stood ("[image (png, 34 KB)]"), which is also what the
  editor's tool card shows; other images are described;
- audio is described by media type and size, as Claude Code does (the API takes no audio);
- resource links and embedded resources name their URI; a text resource shows its text, an
  embedded image resource becomes an image block, other binary resources are described;
- structured content is shown as JSON when the result carries no text.

The cap (:attr:`~lsp_agent.mcp.limits.McpLimits.max_output_tokens`) covers text and images
together, an image counting the tokens the model pays for it
(:func:`~lsp_agent.model.images.image_tokens`): text over the cap is cut with a notice telling
the model how to get less, images that no longer fit are left out with a notice. Over the
warning size a line is logged.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from lsp_agent.mcp.limits import CHARS_PER_TOKEN, McpLimits
from lsp_agent.model.images import (
    API_IMAGE_TYPES,
    MAX_IMAGE_BYTES,
    checked_image,
    decoded_size,
    image_tokens,
)
from lsp_agent.model.types import ImageBlock

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class ConvertedResult:
    """A tool result for the model: ``text`` and the ``images`` that follow it."""

    text: str
    images: tuple[ImageBlock, ...] = ()


def _attr(item: Any, name: str, default: Any = None) -> Any:
    return getattr(item, name, default)


def human_size(size: int) -> str:
    """``size`` bytes in words: "512 bytes", "34 KB", "2.5 MB" (1 KB = 1024 bytes)."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _label(kind: str, mime: str, data: str) -> str:
    short = mime.split("/", 1)[-1] if mime.startswith(f"{kind}/") else mime
    return f"{kind} ({short}, {human_size(decoded_size(data))})"


def _image(mime: str, data: str, images: list[ImageBlock], where: str = "") -> str:
    label = _label("image", mime, data) + where
    if mime not in API_IMAGE_TYPES:
        return f"[{label}: not a type the model can view, not shown]"
    if decoded_size(data) > MAX_IMAGE_BYTES:
        return f"[{label}: larger than the model accepts (5 MB), not shown]"
    try:
        # A server's declared type is not trusted: the API checks the bytes.
        real, data = checked_image(data)
    except ValueError as exc:
        return f"[{label}: {exc}, not shown]"
    images.append(ImageBlock(media_type=real, data=data))
    return f"[{_label('image', real, data)}{where}]"


def _describe(item: Any, images: list[ImageBlock]) -> str:
    kind = _attr(item, "type")
    if kind == "text":
        return str(_attr(item, "text", ""))
    data = _attr(item, "data", "") or ""
    mime = str(_attr(item, "mime_type", None) or "?")
    if kind == "image":
        return _image(mime, data, images)
    if kind == "audio":
        return f"[{_label('audio', mime, data)}: the model cannot hear audio, not shown]"
    if kind == "resource_link":
        name = _attr(item, "name", "")
        return f"[resource link {name}: {_attr(item, 'uri', '')}]"
    if kind == "resource":
        resource = _attr(item, "resource")
        uri = _attr(resource, "uri", "")
        text = _attr(resource, "text")
        if isinstance(text, str):
            return f'<resource uri="{uri}">\n{text}\n</resource>'
        blob = _attr(resource, "blob", "") or ""
        mime = str(_attr(resource, "mime_type", None) or "?")
        if mime.startswith("image/"):
            return _image(mime, blob, images, where=f" from {uri}")
        return f"[binary resource {uri} ({mime}, {human_size(decoded_size(blob))}), not shown]"
    return f"[{kind} content, not shown]"


def _parts(result: Any) -> tuple[str, list[ImageBlock]]:
    items = _attr(result, "content", []) or []
    images: list[ImageBlock] = []
    parts = [_describe(item, images) for item in items]
    structured = _attr(result, "structured_content")
    if structured is not None and not any(_attr(i, "type") == "text" for i in items):
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2, default=str))
    return ("\n".join(parts) if parts else "(no output)"), images


def result_text(result: Any) -> str:
    """The model-facing text of a ``CallToolResult`` (before capping; images named only)."""
    return _parts(result)[0]


def convert_result(result: Any, *, limits: McpLimits, tool: str) -> ConvertedResult:
    """A ``CallToolResult`` as text and image blocks within ``limits.max_output_tokens``
    (see the module docstring); ``tool`` names the tool in notices and log lines."""
    text, images = _parts(result)
    costs = [image_tokens(i.data) for i in images]
    text_tokens = len(text) // CHARS_PER_TOKEN
    total = text_tokens + sum(costs)
    if total >= limits.warn_output_tokens:
        log.warning("MCP tool %s returned about %d tokens", tool, total)
    text = cap_text(text, limits=limits, tool=tool, warn=False)
    room = limits.max_output_tokens - len(text) // CHARS_PER_TOKEN
    kept: list[ImageBlock] = []
    for image, cost in zip(images, costs, strict=True):
        if cost <= room:
            kept.append(image)
            room -= cost
    if len(kept) < len(images):
        text += (
            f"\n\n[{len(images) - len(kept)} of {len(images)} images left out: with them the "
            f"result is about {total} tokens; the limit is {limits.max_output_tokens} "
            "(MAX_MCP_OUTPUT_TOKENS). Ask the tool for fewer or smaller images.]"
        )
    return ConvertedResult(text=text, images=tuple(kept))


def cap_text(text: str, *, limits: McpLimits, tool: str, warn: bool = True) -> str:
    """``text`` cut to ``limits.max_output_tokens`` (estimated) with a notice; logs results
    above ``limits.warn_output_tokens`` unless ``warn`` is false."""
    tokens = len(text) // CHARS_PER_TOKEN
    if warn and tokens >= limits.warn_output_tokens:
        log.warning("MCP tool %s returned about %d tokens", tool, tokens)
    cap = limits.max_output_tokens * CHARS_PER_TOKEN
    if len(text) <= cap:
        return text
    return (
        text[:cap] + f"\n\n[Output truncated: {tool} returned about {tokens} tokens; the limit is "
        f"{limits.max_output_tokens} (MAX_MCP_OUTPUT_TOKENS). Ask the tool for less, e.g. "
        "with a narrower query or pagination.]"
    )
