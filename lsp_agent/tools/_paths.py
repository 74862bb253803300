"""Path handling shared by the built-in tools.

Every path a tool records (read-state keys, ``Prepared.paths``, locations) is absolute and
resolved (symlinks and ``..`` removed) so that one file has one key however the model spelled
it. Whether a path is *allowed* is not decided here: that is the permission engine's job, fed by
``Prepared.paths``.
"""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

from lsp_agent.tools.base import ToolError

_POSIX = os.name == "posix"
_O_PATH = getattr(os, "O_PATH", 0) if sys.platform.startswith("linux") else 0
"""Linux's ``O_PATH``: open a name without opening the file (no side effects, no read
permission needed); 0 where the shortcut in :func:`real_path` is not available."""


def _refuse_nul(value: str, name: str) -> None:
    if "\x00" in value:
        raise ToolError(f"{name} contains a NUL character, which no file name can hold.")


def resolve_file_path(file_path: str) -> Path:
    """The resolved absolute path for a tool's ``file_path`` argument.

    Claude Code's file tools take absolute paths only, so a relative one is refused rather
    than guessed. Raises :class:`ToolError` for an empty or relative path, or one that goes
    through a symbolic link loop.
    """
    if not file_path.strip():
        raise ToolError("file_path is empty; pass the absolute path of the file.")
    _refuse_nul(file_path, "file_path")
    raw = Path(file_path)
    if not raw.is_absolute():
        raise ToolError(
            f"file_path must be an absolute path, got {file_path!r}. "
            "Pass the full path starting with '/'."
        )
    try:
        return real_path(raw)
    except RuntimeError as exc:
        raise ToolError(_loop_message(file_path)) from exc


def real_path(path: Path) -> Path:
    """``path`` (absolute) with symlinks and ``..`` resolved: ``path.resolve()``.

    On Linux an existing file's real path is read from the kernel: the name is opened with
    ``O_PATH`` (nothing is read, a FIFO or device is not opened) and its ``/proc/self/fd``
    link names the file reached. That is 3 system calls and a few C calls where
    ``Path.resolve`` makes a Python ``lstat`` per component and a final ``stat``. Whatever
    that does not answer (a missing file, a symlink loop, no ``/proc``, a file unlinked
    meanwhile) goes to ``Path.resolve``, which fails as before for a loop.
    """
    if _O_PATH:
        try:
            fd = os.open(path, _O_PATH | os.O_CLOEXEC)
        except (OSError, ValueError):
            return path.resolve()
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            real = ""
        finally:
            os.close(fd)
        # Not a path from this process's root, or unlinked since it was opened.
        if real.startswith("/") and not real.endswith(" (deleted)"):
            return Path(real)
    return path.resolve()


def resolve_search_path(path: str | None, cwd: Path) -> Path:
    """The resolved absolute directory or file a search tool's optional ``path`` names.

    ``None`` or an empty string means ``cwd``; relative paths are taken relative to ``cwd``.
    Raises :class:`ToolError` if the path does not exist.
    """
    resolved = search_target(path, cwd)
    if not resolved.exists():
        raise ToolError(f"Path does not exist: {resolved}. {not_found_hint(resolved)}".rstrip())
    return resolved


def search_target(path: str | None, cwd: Path) -> Path:
    """Like :func:`resolve_search_path` without the existence check (for permission checks
    that must not reveal whether the path exists). Raises :class:`ToolError` for a NUL or a
    symbolic link loop."""
    if path is None or not path.strip():
        return cwd.resolve()
    _refuse_nul(path, "path")
    raw = Path(path).expanduser()
    try:
        return (raw if raw.is_absolute() else cwd / raw).resolve()
    except RuntimeError as exc:
        raise ToolError(_loop_message(path)) from exc


def _loop_message(path: str) -> str:
    # Path.resolve's RuntimeError ("Symlink loop from ...") would reach the model as a crash
    # of the tool (and the log as a traceback); the loop is the user's tree, not a bug.
    return (
        f"{path!r} goes through a symbolic link loop (links that lead back to each other), "
        "so it names no file or folder."
    )


def display_path(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when it lies inside it, else the absolute path (for titles)."""
    if _POSIX:
        # What relative_to gives on POSIX, without making (and printing) a relative path.
        parts, base = path.parts, cwd.parts
        if parts[: len(base)] != base or len(parts) == len(base):
            return str(path)
        return "/".join(parts[len(base) :])
    try:
        relative = path.relative_to(cwd)
    except ValueError:
        return str(path)
    return str(relative) if str(relative) != "." else str(path)


def similar_names(path: Path, *, limit: int = 3) -> list[Path]:
    """Existing entries of ``path``'s directory whose names resemble ``path.name``.

    Used to turn "file not found" into "did you mean ...". Returns at most ``limit`` paths,
    best first; an unreadable or missing directory gives an empty list.
    """
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    matches = difflib.get_close_matches(path.name, names, n=limit, cutoff=0.6)
    if len(matches) < limit:
        # Same stem, other extension (app.js for app.ts) is the most common slip.
        stem = path.stem
        for name in sorted(names):
            if name not in matches and Path(name).stem == stem:
                matches.append(name)
            if len(matches) >= limit:
                break
    return [path.parent / name for name in matches]


def not_found_hint(path: Path) -> str:
    """A sentence suggesting similar names for a missing ``path``, or ``""`` if none."""
    if not path.parent.is_dir():
        return f"The directory {path.parent} does not exist either."
    candidates = similar_names(path)
    if not candidates:
        return ""
    listed = ", ".join(str(candidate) for candidate in candidates)
    return f"Did you mean {listed}?"
