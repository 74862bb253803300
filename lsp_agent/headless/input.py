"""The prompts of one headless run: the command-line prompt, then, with ``--input-format
stream-json``, every user message read from stdin as it arrives.

Each stdin line is one JSON object in the shape Claude Code's ``--input-format stream-json``
reads (its Agent SDK's user message): ``{"type": "user", "message": {"role": "user",
"content": "text" | [{"type": "text", "text": ...}, ...]}}``. Each message is one turn of the
same session, answered by its own ``result`` line. Blank lines are skipped; a line of another
``type`` is reported on stderr and skipped; a line that is not JSON, or a user message without
text, ends the run with :class:`InputError` (exit code 2).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, TextIO

from lsp_agent.headless.options import HeadlessOptions


class InputError(Exception):
    """A stdin line that is not a usable message; the message names the line and the
    problem."""


def message_text(obj: Any, *, line: int) -> str | None:
    """The prompt text of one decoded stdin line: ``None`` for a line of another type; raises
    :class:`InputError` for a user message without text."""
    if not isinstance(obj, dict):
        raise InputError(f"stdin line {line}: expected a JSON object")
    if obj.get("type") != "user":
        return None
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "text":
                kind = block.get("type") if isinstance(block, dict) else type(block).__name__
                raise InputError(
                    f"stdin line {line}: content blocks of type {kind!r} are not supported "
                    "(text only)"
                )
            parts.append(str(block.get("text", "")))
        text = "\n\n".join(parts)
    else:
        raise InputError(f'stdin line {line}: a user message needs "message": {{"content": ...}}')
    if not text.strip():
        raise InputError(f"stdin line {line}: the message has no text")
    return text


async def prompts(options: HeadlessOptions, *, stdin: TextIO, err: TextIO) -> AsyncIterator[str]:
    """The run's prompts in order (see the module docstring). stdin is read in a worker thread,
    one line at a time, so a message sent after the previous result is answered."""
    if options.prompt.strip():
        yield options.prompt
    if options.input_format != "stream-json":
        return
    number = 0
    while True:
        raw = await asyncio.to_thread(_readline, stdin)
        if not raw:
            return
        number += 1
        if not raw.strip():
            continue
        obj = decode_line(raw, line=number)
        text = message_text(obj, line=number)
        if text is None:
            kind = obj.get("type")
            err.write(f"lsp-agent: stdin line {number}: ignored a message of type {kind!r}\n")
            continue
        yield text


def _readline(stdin: TextIO) -> bytes:
    """The next line of ``stdin`` as bytes (``b""`` at its end): read below the text layer,
    whose error handler (``surrogateescape`` under a C locale) would let bytes that are not
    UTF-8 through as lone surrogates. Streams without a binary buffer (tests) are encoded."""
    buffer = getattr(stdin, "buffer", None)
    if buffer is not None:
        return bytes(buffer.readline())
    return stdin.readline().encode("utf-8", "surrogateescape")


def decode_line(raw: bytes, *, line: int) -> Any:
    """The JSON value of one stdin line. Raises :class:`InputError` naming the line when it
    is not UTF-8, not JSON, or nested deeper than the parser goes."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"stdin line {line}: not UTF-8 (byte {exc.start}: {raw[exc.start : exc.start + 1]!r})"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"stdin line {line}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise InputError(f"stdin line {line}: not JSON (nested too deeply)") from None
