"""The ``Read`` tool: a text file as ``cat -n`` output, from the editor buffer when open."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from lsp_agent.protocol.events import Location, ToolKind
from lsp_agent.tools._files import model_safe, read_snapshot
from lsp_agent.tools._paths import display_path, resolve_file_path
from lsp_agent.tools._schema import tidy_schema
from lsp_agent.tools._text import numbered, split_lines
from lsp_agent.tools.base import Prepared, Tool, ToolContext, ToolInput, ToolOutput

DEFAULT_LIMIT = 2000
"""Lines returned when the model gives no ``limit``."""

MAX_WHOLE_FILE_BYTES = 256 * 1024
"""A read without ``offset``/``limit`` of a larger file (UTF-8 bytes of its text) gets a
partial view: its first lines and how to read the rest."""

PARTIAL_VIEW_CHARS = 40_000
"""Characters of a partial view (about 10,000 tokens)."""

DESCRIPTION = """\
Reads a file from the local filesystem. If the file is open in the user's editor, you get the \
editor's current text, including unsaved changes.

Usage:
- The file_path parameter must be an absolute path, not a relative path.
- By default, it reads up to 2000 lines starting from the beginning of the file.
- You can optionally specify a line offset and limit (especially handy for long files), but \
it's recommended to read the whole file by not providing these parameters.
- Any lines longer than 2000 characters will be truncated.
- Results are returned using cat -n format, with line numbers starting at 1: each line is \
the line number, a tab, then the line exactly as in the file. When editing, never include the \
line-number prefix in old_string or new_string.
- For files larger than 256 KiB a read without offset/limit returns a partial view (the first \
lines); read the rest in parts with offset and limit, or search with Grep.
- This tool reads text files only; it cannot read directories (use Glob or Bash `ls`) or \
binary files.
- You can call multiple tools in a single response. It is often better to speculatively read \
multiple potentially useful files in parallel.
- If you read a file that exists but has empty contents you will receive a note saying so."""


class ReadInput(ToolInput):
    """Input of ``Read`` (Claude Code's shape)."""

    model_config = ConfigDict(json_schema_extra=tidy_schema)

    file_path: str = Field(description="The absolute path to the file to read")
    offset: int | None = Field(
        default=None,
        ge=0,
        description="The line number to start reading from. Only provide if the file is too "
        "large to read at once",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="The number of lines to read. Only provide if the file is too large to "
        "read at once.",
    )


class ReadTool(Tool[ReadInput]):
    """Read a text file through the workspace overlay; records what was read for Edit/Write.

    Errors (relative path, missing file — with similar names suggested, directory, binary,
    oversized) are :class:`ToolError` messages for the model.
    """

    name: ClassVar[str] = "Read"
    description: ClassVar[str] = DESCRIPTION
    input_model: ClassVar[type[ToolInput]] = ReadInput
    kind: ClassVar[ToolKind] = "read"
    read_only: ClassVar[bool] = True
    concurrency_safe: ClassVar[bool] = True
    reads_disk: ClassVar[bool] = False
    writes_disk: ClassVar[bool] = False
    resolved_paths: ClassVar[bool] = True

    def title(self, inp: ReadInput) -> str:
        """``Read <path>`` plus the line range when one was asked for."""
        return f"Read {inp.file_path}{_range_suffix(inp)}"

    async def prepare(self, inp: ReadInput, ctx: ToolContext) -> Prepared:
        """Resolve the path (no side effects)."""
        path = resolve_file_path(inp.file_path)
        return Prepared(
            title=f"Read {display_path(path, ctx.cwd)}{_range_suffix(inp)}",
            paths=(path,),
            locations=(Location(path=str(path), line=inp.offset or None),),
        )

    async def call(self, inp: ReadInput, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        """Read the file and format the requested lines."""
        (path,) = prepared.paths
        snapshot = read_snapshot(ctx, path)
        text = snapshot.text
        ranged = inp.offset is not None or inp.limit is not None
        size = 0
        if not ranged and len(text) * 4 > MAX_WHOLE_FILE_BYTES:
            size = len(text.encode("utf-8", "surrogatepass"))
        # Claude Code counts any read, partial or not, as having read the file.
        ctx.read_state.digests[path] = snapshot.digest
        ctx.read_state.versions[path] = snapshot.version

        lines = split_lines(text)
        total = len(lines)
        raw_output = {"total_lines": total, "source": snapshot.source}
        if size > MAX_WHOLE_FILE_BYTES:
            return _partial_view(lines, size=size, raw_output=raw_output)
        if total == 0:
            return ToolOutput(text="(file is empty)", raw_output=raw_output)
        start = max(inp.offset or 1, 1)
        if start > total:
            count = f"{total} line{'' if total == 1 else 's'}"
            return ToolOutput(
                text=f"(offset {start} is past the end of the file: it has {count})",
                raw_output=raw_output,
            )
        end = min(total, start - 1 + (inp.limit or DEFAULT_LIMIT))
        body = model_safe(numbered(lines[start - 1 : end], start))
        if start > 1 or end < total:
            body += (
                f"\n\n(Showed lines {start}-{end} of {total}. "
                "Use offset and limit to read other parts.)"
            )
        return ToolOutput(text=body, raw_output=raw_output)


def _partial_view(lines: list[str], *, size: int, raw_output: dict[str, Any]) -> ToolOutput:
    """The start of a file too large to read whole: as many first lines as fit
    :data:`PARTIAL_VIEW_CHARS`, and how to read the rest (Claude Code answers such reads with a
    partial view too, instead of refusing)."""
    shown = 0
    chars = 0
    for line in lines[:DEFAULT_LIMIT]:
        chars += len(line) + 8
        if chars > PARTIAL_VIEW_CHARS and shown:
            break
        shown += 1
    body = model_safe(numbered(lines[:shown], 1))
    note = (
        f"\n\n(PARTIAL view: the file is {size // 1024} KiB and {len(lines)} lines, more than "
        f"the {MAX_WHOLE_FILE_BYTES // 1024} KiB a whole read may return; showed lines 1-{shown}. "
        f"Read other parts with offset and limit, e.g. offset={shown + 1} limit={shown}, or "
        "Grep for specific content.)"
    )
    return ToolOutput(text=body + note, raw_output={**raw_output, "partial": True})


def _range_suffix(inp: ReadInput) -> str:
    if inp.offset is None and inp.limit is None:
        return ""
    start = max(inp.offset or 1, 1)
    if inp.limit is None:
        return f" (from line {start})"
    return f" (lines {start}-{start + inp.limit - 1})"
