"""The prompt of ``lsp-agent -p``: the PROMPT argument joined with piped standard input.

Claude Code's ``cat logs.txt | claude -p "explain"`` sends both: the prompt, then what was piped
(here after a blank line). With no PROMPT (or ``-``) the whole of stdin is the prompt. Only a
pipe or a regular file counts as piped input: a terminal or ``/dev/null`` is never read, so a
run started from a script whose stdin stays open does not wait for it.
"""

from __future__ import annotations

import os
import stat
from typing import TextIO

MAX_STDIN_BYTES = 64 * 1024 * 1024
"""Piped input beyond this (64 MiB) is refused: it could not fit any model's context anyway."""


def piped(stdin: TextIO | None) -> bool:
    """Whether ``stdin`` is a pipe or a regular file (not a terminal, ``/dev/null`` or
    closed). Streams without a file descriptor (tests) count as not piped."""
    if stdin is None:
        return False
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def read_all(stdin: TextIO) -> str:
    """All of ``stdin``; raises ``ValueError`` naming the problem when it is not UTF-8 text or
    over :data:`MAX_STDIN_BYTES`."""
    buffer = getattr(stdin, "buffer", None)
    if buffer is None:
        text = stdin.read()
        if len(text.encode("utf-8", "surrogatepass")) > MAX_STDIN_BYTES:
            raise ValueError(f"stdin holds more than {MAX_STDIN_BYTES // (1024 * 1024)} MiB")
        return text
    data = buffer.read(MAX_STDIN_BYTES + 1)
    if len(data) > MAX_STDIN_BYTES:
        raise ValueError(f"stdin holds more than {MAX_STDIN_BYTES // (1024 * 1024)} MiB")
    try:
        return str(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"stdin is not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1]!r})"
        ) from None


def prompt_text(prompt: str | None, *, stdin: TextIO | None, read_stdin: bool = True) -> str:
    """The prompt of a run from the PROMPT argument (``None`` when absent) and ``stdin``.

    ``read_stdin`` is false for ``--input-format stream-json`` (stdin carries the messages):
    the argument, possibly empty, is returned as it is. Raises ``ValueError`` when there is no
    prompt at all or stdin cannot be read as text.
    """
    if not read_stdin:
        if prompt == "-":
            raise ValueError("PROMPT '-' reads stdin, which --input-format stream-json uses")
        return prompt or ""
    if prompt is None or prompt == "-":
        if stdin is None or (prompt is None and not piped(stdin)):
            raise ValueError("no prompt: give PROMPT or pipe it on stdin")
        text = read_all(stdin)
    else:
        text = prompt
        if piped(stdin):
            assert stdin is not None
            extra = read_all(stdin)
            if extra.strip():
                text = f"{prompt}\n\n{extra}"
    if not text.strip():
        raise ValueError("the prompt is empty")
    return text
