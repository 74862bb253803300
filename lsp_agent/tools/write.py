"""The ``Write`` tool: create a file or replace its whole content, through the change-set
pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import ConfigDict, Field

from lsp_agent.protocol.documents import FileChange
from lsp_agent.protocol.events import Location, ToolKind
from lsp_agent.tools._files import (
    apply_prepared,
    check_encodable,
    check_fresh,
    read_only_reason,
    read_optional,
)
from lsp_agent.tools._paths import display_path, resolve_file_path
from lsp_agent.tools._schema import tidy_schema
from lsp_agent.tools._text import dominant_eol, split_lines, to_lf, with_eol
from lsp_agent.tools.base import (
    Prepared,
    Tool,
    ToolContext,
    ToolError,
    ToolInput,
    ToolOutput,
)
from lsp_agent.tools.diffing import diff_item

DESCRIPTION = """\
Writes a file to the local filesystem.

Usage:
- This tool will overwrite the existing file if there is one at the provided path.
- If this is an existing file, you MUST use the Read tool first to read the file's contents. \
This tool will fail if you did not read the file first, or if it changed since you read it.
- The file_path parameter must be an absolute path. Missing parent directories are created.
- An overwritten file keeps its encoding, byte-order mark and CRLF line endings.
- ALWAYS prefer editing existing files in the codebase with the Edit tool, which only sends \
the changed part. NEVER write new files unless explicitly required.
- NEVER proactively create documentation files (*.md) or README files. Only create \
documentation files if explicitly requested by the User."""


class WriteInput(ToolInput):
    """Input of ``Write`` (Claude Code's shape)."""

    model_config = ConfigDict(json_schema_extra=tidy_schema)

    file_path: str = Field(
        description="The absolute path to the file to write (must be absolute, not relative)"
    )
    content: str = Field(description="The content to write to the file")


class WriteTool(Tool[WriteInput, bool]):
    """Create or overwrite a file. Overwriting needs a prior Read of the unchanged file
    (:class:`ToolError` otherwise); a new file's change has ``base=None`` so the door refuses it
    if the file appeared meanwhile."""

    name: ClassVar[str] = "Write"
    description: ClassVar[str] = DESCRIPTION
    input_model: ClassVar[type[ToolInput]] = WriteInput
    kind: ClassVar[ToolKind] = "edit"
    reads_disk: ClassVar[bool] = False
    writes_disk: ClassVar[bool] = False
    resolved_paths: ClassVar[bool] = True

    def title(self, inp: WriteInput) -> str:
        """``Write <path>``."""
        return f"Write {inp.file_path}"

    def target_paths(self, inp: WriteInput, ctx: ToolContext) -> tuple[Path, ...] | None:
        """The resolved ``file_path`` (``None`` when it is not a usable absolute path)."""
        try:
            return (resolve_file_path(inp.file_path),)
        except ToolError:
            return None

    async def prepare(self, inp: WriteInput, ctx: ToolContext) -> Prepared[bool]:
        """Compute the change and its diff; raises :class:`ToolError` (see the class doc)."""
        path = resolve_file_path(inp.file_path)
        label = display_path(path, ctx.cwd)
        snapshot = read_optional(ctx, path)
        if snapshot is None:
            change = FileChange(path=path, base=None, new_text=inp.content)
            old_text = None
        else:
            check_fresh(ctx, snapshot)
            new_text = inp.content
            if dominant_eol(snapshot.text) == "\r\n":
                new_text = with_eol(to_lf(new_text), "\r\n")
            check_encodable(snapshot, new_text)
            change = FileChange(path=path, base=snapshot, new_text=new_text)
            old_text = snapshot.text
        return Prepared(
            title=f"Write {label}",
            content=(diff_item(path, old_text, change.new_text, label=label),),
            changes=(change,),
            paths=(path,),
            needs_approval=read_only_reason(path) if snapshot is not None else None,
            locations=(Location(path=str(path), line=1),),
            data=snapshot is None,
        )

    async def call(self, inp: WriteInput, prepared: Prepared[bool], ctx: ToolContext) -> ToolOutput:
        """Apply the change; raises :class:`ToolError` if the door refused it."""
        created = bool(prepared.data)
        snapshot, note = await apply_prepared(ctx, prepared)
        lines = len(split_lines(snapshot.text))
        counted = f"{lines} line{'' if lines == 1 else 's'}"
        if created:
            text = f"File created successfully at: {snapshot.path} ({counted})"
        else:
            text = f"The file {snapshot.path} has been overwritten ({counted}).{note}"
        return ToolOutput(
            text=text,
            content=prepared.content,
            raw_output={"created": created, "lines": lines},
        )
