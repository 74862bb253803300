"""Reading, freshness checks and applying changes, shared by Read, Edit and Write.

All reads go through :meth:`Workspace.read` (the editor's buffer first, the disk second), so
the model sees and edits what the user sees, unsaved text included. All writes go through
:meth:`Workspace.apply` (the change-set pipeline). Errors become :class:`ToolError` messages
written for the model.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from lsp_agent.protocol.documents import TextSnapshot
from lsp_agent.tools._paths import not_found_hint
from lsp_agent.tools.base import Prepared, ToolContext, ToolError
from lsp_agent.workspace.textfile import NotTextError, encode_text

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

NOT_READ = "File has not been read yet. Read it first before writing to it."
MODIFIED = (
    "File has been modified since read, either by the user or by a linter. "
    "Read it again before attempting to write it."
)
MERGED = (
    " The user changed other lines of this file while the change waited for approval; "
    "both are kept (Read the file to see its current text)."
)


def read_snapshot(ctx: ToolContext, path: Path) -> TextSnapshot:
    """The current text of ``path`` (buffer or disk).

    Every failure (missing, directory, binary, too large, unreadable) raises
    :class:`ToolError`; a missing file's message suggests similar names.
    """
    snapshot = read_optional(ctx, path)
    if snapshot is None:
        parts = (
            f"File does not exist: {path}.",
            not_found_hint(path),
            f"Current working directory: {ctx.cwd}.",
        )
        raise ToolError(" ".join(part for part in parts if part))
    return snapshot


def read_optional(ctx: ToolContext, path: Path) -> TextSnapshot | None:
    """Like :func:`read_snapshot`, but a missing file gives ``None``."""
    try:
        return ctx.workspace.read(path)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ToolError(
            f"{path} is a directory, not a file. Use Glob to find files in it, "
            "or Bash with `ls` to list it."
        ) from None
    except NotADirectoryError:
        raise ToolError(f"{path} is not a valid file path: a parent is not a directory.") from None
    except NotTextError as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        raise ToolError(f"Cannot read {path} as text: {reason}.") from None
    except UnicodeDecodeError as exc:
        # A byte-order mark promised an encoding the rest of the bytes do not follow.
        raise ToolError(
            f"Cannot read {path} as text: it is not valid {exc.encoding} ({exc.reason})."
        ) from None
    except PermissionError:
        raise ToolError(f"Permission denied reading {path}.") from None
    except OSError as exc:
        raise ToolError(f"Cannot read {path}: {exc.strerror or exc}.") from None


def check_fresh(ctx: ToolContext, snapshot: TextSnapshot) -> None:
    """Refuse to change a file the model has not read, or that changed since it read it.

    Raises :class:`ToolError` (the messages are Claude Code's). The comparison is by text
    digest, so an editor save or a touch that leaves the text alone does not count as a change.
    """
    digest = ctx.read_state.digests.get(snapshot.path)
    if digest is None:
        raise ToolError(NOT_READ)
    if digest != snapshot.digest:
        raise ToolError(MODIFIED)


def check_encodable(snapshot: TextSnapshot, new_text: str) -> None:
    """Refuse text the file's encoding cannot hold (a ``€`` in a latin-1 file).

    Only disk files matter: an editor buffer is saved by the editor in its own encoding.
    Raises :class:`ToolError` naming the first offending characters.
    """
    if snapshot.source != "disk":
        return
    try:
        encode_text(new_text, encoding=snapshot.encoding, bom=snapshot.bom)
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : min(exc.end, exc.start + 10)]
        raise ToolError(
            f"{snapshot.path} is stored as {snapshot.encoding}, which cannot hold {bad!r}. "
            "Use only characters that encoding supports (or escapes the file's language offers)."
        ) from None


def read_only_reason(path: Path) -> str | None:
    """Why ``path`` is a read-only file that a write would have to make writable, or
    ``None`` (missing, or writable). Read-only: no write bit at all (``0444``; checked on the
    bits because ``root`` may write anything), or not writable by this process."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if not stat.S_ISREG(mode):
        return None
    bits = stat.S_IMODE(mode)
    if bits & 0o222 and os.access(path, os.W_OK):
        return None
    return (
        f"{path} is read-only (mode {bits:04o}); approving this call makes it writable for its "
        f"owner (mode {bits | 0o200:04o}) and then changes it"
    )


def make_writable(path: Path) -> None:
    """Add the owner's write bit to ``path`` (after the user approved it: see
    :func:`read_only_reason`). Raises :class:`ToolError` when the mode cannot be changed."""
    try:
        bits = stat.S_IMODE(path.stat().st_mode)
        os.chmod(path, bits | 0o200)
    except OSError as exc:
        raise ToolError(
            f"{path} is read-only and its mode could not be changed: {exc.strerror or exc}."
        ) from None


async def apply_prepared(ctx: ToolContext, prepared: Prepared[Any]) -> tuple[TextSnapshot, str]:
    """Apply ``prepared.changes`` (exactly one) and record the new text as read.

    A read-only file (``prepared.needs_approval``, approved by the user) is made writable
    first. Returns the new snapshot (from the door, else built from the new text) and a note for the
    model (``""`` unless the change was merged with the user's newer text, which the model has
    not seen). Raises :class:`ToolError` with the door's reason when the change is refused
    (e.g. the user changed the same lines since the model read the file).
    """
    (change,) = prepared.changes
    if prepared.needs_approval is not None and read_only_reason(change.path) is not None:
        make_writable(change.path)
    result = await ctx.workspace.apply(prepared.changes, label=prepared.title)
    if not result.applied:
        raise ToolError(
            f"The change to {change.path} was not applied: {result.failure or 'unknown reason'}"
        )
    snapshot = next(
        (snap for snap in result.snapshots if snap.path == change.path),
        TextSnapshot(path=change.path, text=change.new_text),
    )
    ctx.read_state.digests[change.path] = snapshot.digest
    note = MERGED if change.path in result.merged else ""
    return snapshot, note


def model_safe(text: str) -> str:
    """``text`` without lone surrogates (from undecodable bytes), which JSON cannot carry."""
    if text.isascii():  # a flag of the string: no surrogate, and no scan of every character
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)
