"""Reading one memory file: the editor's buffer first, then the disk, within the size caps.

Caps (Claude Code's documentation, "How it works"): a file over 4 MiB is skipped; a file over
40,000 characters loads with a warning, since it costs context on every request.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lsp_agent.context.memory.types import MemoryNotice

MAX_FILE_BYTES = 4 * 1024 * 1024
"""A memory file larger than this (bytes) is skipped with a notice."""

LARGE_FILE_CHARS = 40_000
"""A memory file longer than this (code points) loads with a warning."""

Overlay = Callable[[Path], str | None]
"""The editor's current text of a path when it is open there (unsaved edits included)."""


def no_overlay(_path: Path) -> str | None:
    """An :data:`Overlay` for doors without editor buffers."""
    return None


@dataclass(frozen=True, kw_only=True)
class ReadResult:
    """``text`` of the file, or ``None`` with ``notice`` saying why it was not read."""

    text: str | None
    notice: MemoryNotice | None = None


def exists(path: Path, overlay: Overlay) -> bool:
    """Whether ``path`` is a file (or an open editor buffer)."""
    if overlay(path) is not None:
        return True
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def read_memory_text(path: Path, *, overlay: Overlay) -> ReadResult:
    """The text of memory file ``path``; never raises.

    An open buffer wins over the disk. Files over :data:`MAX_FILE_BYTES`, FIFOs and devices,
    unreadable, binary (NUL bytes) and non-UTF-8 files are not read; the notice names the
    problem. A UTF-8 byte-order mark is dropped.
    """
    buffered = overlay(path)
    if buffered is not None:
        return _checked(path, buffered)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            return _fail(path, "unreadable", f"{path} is {kind}; not loaded")
        if info.st_size > MAX_FILE_BYTES:
            return _fail(
                path,
                "file-too-large",
                f"{path} is {info.st_size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit "
                "for memory files; skipped",
            )
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return _fail(path, "unreadable", f"{path} cannot be read: {exc.strerror or exc}")
    except ValueError as exc:  # a NUL in the path
        return _fail(path, "unreadable", f"{path} cannot be read: {exc}")
    if b"\0" in data:
        return _fail(path, "binary", f"{path} looks binary (it contains NUL bytes); not loaded")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return _fail(
            path,
            "not-utf8",
            f"{path} is not valid UTF-8 (byte {exc.start}); memory files must be UTF-8; not loaded",
        )
    return _checked(path, text)


def _checked(path: Path, text: str) -> ReadResult:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        return _fail(
            path,
            "file-too-large",
            f"{path} is over the {MAX_FILE_BYTES:,}-byte limit for memory files; skipped",
        )
    text = text.replace("\r\n", "\n")
    if len(text) > LARGE_FILE_CHARS:
        return ReadResult(
            text=text,
            notice=MemoryNotice(
                path=path,
                code="large-file",
                message=(
                    f"{path} is {len(text):,} characters, over {LARGE_FILE_CHARS:,}: it is "
                    "loaded in full into every request; consider moving parts into rules "
                    "scoped with `paths:` or into files read on demand"
                ),
            ),
        )
    return ReadResult(text=text)


def _fail(path: Path, code: str, message: str) -> ReadResult:
    return ReadResult(
        text=None,
        notice=MemoryNotice(path=path, code=code, message=message),  # type: ignore[arg-type]
    )
