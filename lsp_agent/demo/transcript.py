"""How the demo shows what happens: streamed agent text, tool calls with their status, editor
actions and diffs, written to a text stream (the terminal)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TextIO

_STATUS_MARK = {"completed": "✓", "failed": "✗", "in_progress": "…", "pending": "·"}
_MAX_OUTPUT_LINES = 12


class Transcript:
    """Writes the demo's transcript to ``out``. ``color`` adds ANSI colours (terminals only).

    Agent text arrives in chunks and is written as it comes; every other line starts on a
    fresh line.
    """

    def __init__(self, *, out: TextIO, color: bool) -> None:
        self._out = out
        self._color = color
        self._mid_line = False
        self._titles: dict[str, str] = {}

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self._color else text

    def _line(self, text: str) -> None:
        if self._mid_line:
            self._out.write("\n")
            self._mid_line = False
        self._out.write(text + "\n")
        self._out.flush()

    def heading(self, text: str) -> None:
        """A section heading."""
        self._line("")
        self._line(self._style(f"== {text}", "1"))

    def info(self, text: str) -> None:
        """A plain line from the demo itself."""
        self._line(self._style(text, "2"))

    def editor(self, text: str) -> None:
        """Something the (simulated) editor did: open, type, apply an edit, save."""
        self._line(self._style(f"[editor] {text}", "36"))

    def warning(self, text: str) -> None:
        """A problem worth the user's attention."""
        self._line(self._style(f"warning: {text}", "33"))

    def agent_text(self, chunk: str) -> None:
        """A streamed piece of the agent's answer."""
        if not chunk:
            return
        self._out.write(chunk)
        self._out.flush()
        self._mid_line = not chunk.endswith("\n")

    def block(self, text: str, *, indent: str = "    ", diff: bool = False) -> None:
        """Multi-line text (tool output, or a unified diff when ``diff``), indented."""
        for line in text.rstrip("\n").splitlines():
            self._line(indent + (_colour_diff_line(line, self._style) if diff else line))

    def update(self, update: Mapping[str, Any]) -> None:
        """Show one ``lspAgent/session/update`` payload's ``update`` object."""
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            content = update.get("content") or {}
            self.agent_text(str(content.get("text", "")))
        elif kind == "tool_call":
            call_id = str(update.get("toolCallId", ""))
            title = str(update.get("title") or call_id)
            self._titles[call_id] = title
            self._line(self._style(f"● {title}", "35"))
        elif kind == "tool_call_update":
            self._tool_update(update)

    def _tool_update(self, update: Mapping[str, Any]) -> None:
        call_id = str(update.get("toolCallId", ""))
        if update.get("title"):
            self._titles[call_id] = str(update["title"])
        status = update.get("status")
        if status not in ("completed", "failed"):
            return
        title = self._titles.get(call_id, call_id)
        mark = _STATUS_MARK[str(status)]
        code = "32" if status == "completed" else "31"
        self._line(self._style(f"  {mark} {title}", code))
        for item in update.get("content") or ():
            if item.get("type") == "content":
                text = str((item.get("content") or {}).get("text", ""))
                self.block(_tail(text), indent="      ")


def _tail(text: str) -> str:
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= _MAX_OUTPUT_LINES:
        return "\n".join(lines)
    hidden = len(lines) - _MAX_OUTPUT_LINES
    return "\n".join([f"… ({hidden} more lines)", *lines[-_MAX_OUTPUT_LINES:]])


def _colour_diff_line(line: str, style: Callable[[str, str], str]) -> str:
    if line.startswith(("+++", "---")):
        return style(line, "1")
    if line.startswith("+"):
        return style(line, "32")
    if line.startswith("-"):
        return style(line, "31")
    if line.startswith("@@"):
        return style(line, "36")
    return line
