"""Converting a prompt's ACP content blocks into the core's prompt parts.

``text`` → :class:`PromptText`; ``resource`` (an @-mention or selection carrying buffer text,
``_meta.range`` = the selected LSP range) → :class:`PromptResource` with 1-based lines;
``resource_link`` → :class:`PromptResource` with the text the server reads (buffer first, then
disk). Any other block type is rejected with ``-32602`` naming ``prompt[i]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pygls.uris import to_fs_path

from lsp_agent.lsp.errors import describe_validation_error, invalid_params
from lsp_agent.lsp.params import (
    CONTENT_BLOCKS,
    Range,
    ResourceBlockIn,
    ResourceLinkBlockIn,
    TextBlockIn,
)
from lsp_agent.protocol.documents import TextSnapshot
from lsp_agent.protocol.prompt import PromptPart, PromptResource, PromptText
from lsp_agent.workspace.textfile import NotTextError, read_text_file


def path_from(value: str, *, field: str) -> Path:
    """An absolute path from a ``file:`` URI or an absolute path. Raises ``-32602`` naming
    ``field`` otherwise."""
    if "://" in value or value.startswith("file:"):
        fs_path = to_fs_path(value)
        if fs_path is None:
            raise invalid_params(f"{field}: only file: URIs are supported, got {value!r}")
        return Path(fs_path)
    path = Path(value)
    if not path.is_absolute():
        raise invalid_params(f"{field}: must be an absolute path or a file: URI, got {value!r}")
    return path


def lines_of(selection: Range | None) -> tuple[int | None, int | None]:
    """1-based first and last line of an LSP range; a range ending at column 0 of a later line
    ends on the line before (a whole-line selection)."""
    if selection is None:
        return None, None
    start = selection.start.line + 1
    end = selection.end.line + 1
    if selection.end.character == 0 and selection.end.line > selection.start.line:
        end -= 1
    return start, end


def prompt_parts(
    blocks: Sequence[Any],
    *,
    method: str,
    buffer: Callable[[Path], TextSnapshot | None],
) -> list[PromptPart]:
    """Validate and convert ``blocks``; ``buffer`` looks up open buffers for links."""
    parts: list[PromptPart] = []
    for index, block in enumerate(blocks):
        field = f"prompt[{index}]"
        if not isinstance(block, dict):
            raise invalid_params(f"invalid params for {method}: {field}: must be a JSON object")
        kind = block.get("type")
        model = CONTENT_BLOCKS.get(kind) if isinstance(kind, str) else None
        if model is None:
            supported = ", ".join(sorted(CONTENT_BLOCKS))
            raise invalid_params(
                f"invalid params for {method}: {field}.type: {kind!r} is not supported "
                f"(supported: {supported})"
            )
        try:
            parsed = model.model_validate(block)
        except ValidationError as exc:
            detail = describe_validation_error(method, exc).removeprefix(
                f"invalid params for {method}: "
            )
            problems = "; ".join(f"{field}.{p}" for p in detail.split("; "))
            raise invalid_params(f"invalid params for {method}: {problems}") from None
        if isinstance(parsed, ResourceBlockIn):
            start, end = lines_of(parsed.meta.range if parsed.meta else None)
            parts.append(
                PromptResource(
                    path=path_from(parsed.resource.uri, field=f"{field}.resource.uri"),
                    text=parsed.resource.text,
                    start_line=start,
                    end_line=end,
                )
            )
        elif isinstance(parsed, ResourceLinkBlockIn):
            path = path_from(parsed.uri, field=f"{field}.uri")
            parts.append(PromptResource(path=path, text=_read(path, buffer, f"{field}.uri")))
        elif isinstance(parsed, TextBlockIn):
            parts.append(PromptText(text=parsed.text))
    if all(isinstance(p, PromptText) and not p.text.strip() for p in parts):
        # The Messages API rejects empty text; say so now, naming the field, not after a
        # round trip to the model.
        raise invalid_params(f"invalid params for {method}: prompt: the prompt has no text")
    return parts


def _read(path: Path, buffer: Callable[[Path], TextSnapshot | None], field: str) -> str:
    snapshot = buffer(path)
    if snapshot is not None:
        return snapshot.text
    try:
        return read_text_file(path).text
    except (OSError, NotTextError) as exc:
        raise invalid_params(f"{field}: cannot read {path}: {exc}") from None
