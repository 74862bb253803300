"""The ``Edit`` tool: exact string replacement in one file, through the change-set pipeline."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
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
from lsp_agent.tools._paths import display_path, not_found_hint, resolve_file_path
from lsp_agent.tools._replace import replace_exact
from lsp_agent.tools._schema import tidy_schema
from lsp_agent.tools._text import dominant_eol, to_lf, with_eol
from lsp_agent.tools.base import Prepared, Tool, ToolContext, ToolError, ToolInput, ToolOutput
from lsp_agent.tools.diffing import diff_item

# Files up to this many characters are matched in the event loop when old_string occurs in
# them (≈ 1 ms for 1 MiB): handing such a small job to a thread costs a wake-up each way.
_INLINE_CHARS = 1 << 20

DESCRIPTION = """\
Performs exact string replacements in files.

Usage:
- You must use your `Read` tool at least once in the conversation before editing. This tool \
will error if you attempt an edit without reading the file, or if the file changed since you \
read it.
- When editing text from Read tool output, ensure you preserve the exact indentation (tabs/\
spaces) as it appears AFTER the line number prefix. The line number prefix format is: line number \
+ tab. Everything after that tab is the actual file content to match. Never include \
any part of the line number prefix in the old_string or new_string.
- Write line breaks as \\n; files with CRLF line endings keep them.
- ALWAYS prefer editing existing files in the codebase. NEVER write new files unless explicitly \
required.
- The edit will FAIL if `old_string` is not unique in the file. Either provide a larger string \
with more surrounding context to make it unique or use `replace_all` to change every instance \
of `old_string`.
- Use `replace_all` for replacing and renaming strings across the file. This parameter is \
useful if you want to rename a variable for instance.
- If the file is open in the user's editor, the edit applies to the editor buffer (unsaved \
changes included) and fails if the user changed it since you read it."""


class EditInput(ToolInput):
    """Input of ``Edit`` (Claude Code's shape)."""

    model_config = ConfigDict(json_schema_extra=tidy_schema)

    file_path: str = Field(description="The absolute path to the file to modify")
    old_string: str = Field(description="The text to replace")
    new_string: str = Field(
        description="The text to replace it with (must be different from old_string)"
    )
    replace_all: bool = Field(
        default=False, description="Replace all occurrences of old_string (default false)"
    )


@dataclass(frozen=True, kw_only=True)
class EditPlan:
    """Where the edit lands, for the result text: the first changed line (1-based) and how
    many lines the first replacement spans, the number of replacements, and whether the
    call creates the file."""

    first_line: int
    first_span: int
    count: int
    created: bool


class EditTool(Tool[EditInput, EditPlan]):
    """Replace text in a file the model has read; applied as a change set with a base snapshot.

    ``prepare`` computes the whole new text and its diff (shown in the permission prompt) and
    raises :class:`ToolError` for: a relative path, an unread or since-changed file, identical
    strings, no match (showing the closest lines), several matches without ``replace_all``
    (with their line numbers), or text the file's encoding cannot hold. ``call`` applies it;
    the door refuses it if the document moved on since ``prepare``.
    """

    name: ClassVar[str] = "Edit"
    description: ClassVar[str] = DESCRIPTION
    input_model: ClassVar[type[ToolInput]] = EditInput
    kind: ClassVar[ToolKind] = "edit"
    reads_disk: ClassVar[bool] = False
    writes_disk: ClassVar[bool] = False
    resolved_paths: ClassVar[bool] = True

    def title(self, inp: EditInput) -> str:
        """``Edit <path>``."""
        return f"Edit {inp.file_path}"

    def target_paths(self, inp: EditInput, ctx: ToolContext) -> tuple[Path, ...] | None:
        """The resolved ``file_path`` (``None`` when it is not a usable absolute path)."""
        try:
            return (resolve_file_path(inp.file_path),)
        except ToolError:
            return None

    async def prepare(self, inp: EditInput, ctx: ToolContext) -> Prepared[EditPlan]:
        """Compute the change; see the class docstring for the errors."""
        path = resolve_file_path(inp.file_path)
        if inp.old_string == inp.new_string:
            raise ToolError("No changes to make: old_string and new_string are exactly the same.")
        snapshot = read_optional(ctx, path)
        label = display_path(path, ctx.cwd)
        if snapshot is None:
            if inp.old_string:
                parts = (f"File does not exist: {path}.", not_found_hint(path))
                raise ToolError(" ".join(part for part in parts if part))
            # Claude Code: an empty old_string on a missing file creates it.
            change = FileChange(path=path, base=None, new_text=inp.new_string)
            plan = EditPlan(first_line=1, first_span=1, count=1, created=True)
            old_text = None
        else:
            check_fresh(ctx, snapshot)
            if not inp.old_string:
                if snapshot.text.strip():
                    raise ToolError(
                        "old_string is empty but the file already has content. Give the exact "
                        "text to replace, or use Write to replace the whole file."
                    )
                new_text = with_eol(to_lf(inp.new_string), dominant_eol(snapshot.text))
                plan = EditPlan(first_line=1, first_span=1, count=1, created=False)
            else:
                # A replacement that finds its text is linear: done here for files up to
                # _INLINE_CHARS. A miss searches the closest lines, slow on big files, so it
                # runs in a worker thread (as does any big file), off the event loop.
                args = (snapshot.text, inp.old_string, inp.new_string)
                if len(snapshot.text) <= _INLINE_CHARS and to_lf(inp.old_string) in snapshot.text:
                    result = replace_exact(*args, replace_all=inp.replace_all)
                else:
                    result = await asyncio.to_thread(
                        replace_exact, *args, replace_all=inp.replace_all
                    )
                new_text = result.new_text
                plan = EditPlan(
                    first_line=result.first_line,
                    first_span=result.first_span,
                    count=result.count,
                    created=False,
                )
            check_encodable(snapshot, new_text)
            change = FileChange(path=path, base=snapshot, new_text=new_text)
            old_text = snapshot.text
        return Prepared(
            title=f"Edit {label}",
            content=(diff_item(path, old_text, change.new_text, label=label),),
            changes=(change,),
            paths=(path,),
            needs_approval=read_only_reason(path) if snapshot is not None else None,
            locations=(Location(path=str(path), line=plan.first_line),),
            data=plan,
        )

    async def call(
        self, inp: EditInput, prepared: Prepared[EditPlan], ctx: ToolContext
    ) -> ToolOutput:
        """Apply the change; raises :class:`ToolError` if the door refused it."""
        plan = prepared.data
        assert plan is not None  # prepare always makes one
        snapshot, note = await apply_prepared(ctx, prepared)
        path = snapshot.path
        raw_output = {"replacements": plan.count, "created": plan.created}
        if plan.created:
            text = f"File created successfully at: {path}"
        elif plan.count > 1:
            text = (
                f"The file {path} has been updated. All {plan.count} occurrences of old_string "
                "were replaced with new_string."
            )
        else:
            # The model wrote the new text itself: echoing it back (as a numbered snippet)
            # only costs tokens in every later request. Where it landed is what it lacks.
            last = plan.first_line + max(plan.first_span, 1) - 1
            lines = f"line {last}" if last == plan.first_line else f"lines {plan.first_line}-{last}"
            text = f"The file {path} has been updated successfully ({lines})."
        return ToolOutput(text=text + note, content=prepared.content, raw_output=raw_output)
