"""The working-set block of a compacted history, built from server state, not from the summary.

After a compaction the model knows the conversation only through its own summary; this block
adds what the server knows for certain: each file the agent edited with its current editor
version (or "on disk") and its current diagnostics, and the files it read. The memory files
are not repeated: every turn's system prompt holds them as they are now.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.diagnostics.model import SEVERITY_NAMES
from lsp_agent.model.types import Message
from lsp_agent.protocol.host import Host

if TYPE_CHECKING:
    from lsp_agent.diagnostics.service import DiagnosticsService

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
"""Tools whose ``file_path`` input names a file the agent changed."""

MAX_FILES = 30
"""Files listed at most (the newest first); more are counted."""

MAX_PROBLEMS = 5
"""Diagnostics listed per file."""


@dataclass(frozen=True, kw_only=True)
class Touched:
    """Files the agent edited and read, oldest first (absolute paths as the model wrote them)."""

    edited: tuple[str, ...]
    read: tuple[str, ...]


def touched_files(messages: Sequence[Message], earlier: Touched | None = None) -> Touched:
    """The files ``messages`` edited and read, after those of ``earlier`` (files touched before
    an earlier compaction stay known)."""
    edited = dict.fromkeys(earlier.edited if earlier else ())
    read = dict.fromkeys(earlier.read if earlier else ())
    for message in messages:
        for use in message.tool_uses():
            path = use.input.get("file_path")
            if not isinstance(path, str) or not path:
                continue
            if use.name in EDIT_TOOLS:
                edited.pop(path, None)
                edited[path] = None
            elif use.name == "Read":
                read.pop(path, None)
                read[path] = None
    return Touched(edited=tuple(edited), read=tuple(r for r in read if r not in edited))


def _problems(service: DiagnosticsService | None, path: Path) -> list[str]:
    if service is None:
        return []
    store = service.store
    out: list[str] = []
    for channel in sorted(store.channels(path)):
        report = store.latest(path, channel)
        if report is None:
            continue
        for d in report.diagnostics:
            if d.severity <= 2:
                name = SEVERITY_NAMES.get(d.severity, "error")
                out.append(f"line {d.range.start.line + 1}: {name}: {d.message} [{d.source}]")
    return out


def _newest(paths: Iterable[str], limit: int) -> tuple[list[str], int]:
    items = list(paths)
    return items[-limit:], max(0, len(items) - limit)


def render_working_set(
    *,
    touched: Touched,
    host: Host,
    diagnostics: DiagnosticsService | None,
) -> str:
    """The ``<working-set>`` block (see the module doc); ``""`` when there is nothing to say.
    ``host`` gives the editor versions, ``diagnostics`` (``None``: none known) the problems."""
    parts: list[str] = []
    edited, more = _newest(touched.edited, MAX_FILES)
    if edited:
        lines = ["Files you edited, as they are now:"]
        for raw in edited:
            path = Path(raw)
            snapshot = host.buffer(path)
            state = (
                f"open in the editor, version {snapshot.version}"
                if snapshot is not None and snapshot.version is not None
                else "on disk"
            )
            problems = _problems(diagnostics, path)
            shown = problems[:MAX_PROBLEMS]
            if len(problems) > len(shown):
                shown.append(f"... {len(problems) - len(shown)} more")
            body = "".join(f"\n  {p}" for p in shown) if shown else " no errors or warnings known"
            lines.append(f'<file path="{raw}" state="{state}">{body}\n</file>')
        if more:
            lines.append(f"({more} earlier edited files not listed)")
        parts.append("\n".join(lines))
    read, more = _newest(touched.read, MAX_FILES)
    if read:
        listed = ", ".join(read) + (f" and {more} more" if more else "")
        parts.append(f"Files you read (Read them again for their live text): {listed}")
    if not parts:
        return ""
    head = "Working set, built from the editor's state at compaction time (not from the summary):"
    return "<working-set>\n" + head + "\n" + "\n\n".join(parts) + "\n</working-set>"
