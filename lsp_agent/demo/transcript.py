"""How the demo shows what happens: streamed agent text, tool calls with their status, editor
actions and diffs, written to a text stream (the terminal)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

_STATUS_MARK = {"completed": "✓", "failed": "✗", "in_progress": "…", "pending": "·"}
_MAX_OUTPUT_LINES = 12


class Transcript:
    """Writes the demo's transcript to ``out``. ``color`` adds ANSI colours (terminals only).

    Agent text arrives in chunks and is written as it comes; every other line starts on a
    fresh line.
    """

    def __init__(self, *, out: TextIO, color: bool, root: Path | None = None) -> None:
        self._out = out
        self._color = color
        self.root = root
        """Paths under it are shown relative to it (the demo project)."""
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
        verification = (update.get("rawOutput") or {}).get("verification")
        if isinstance(verification, Mapping):
            # The verdict of the agent's own check: one line per file and source instead of
            # the report the model reads.
            for line in verification_lines(verification, root=self.root):
                self._line(self._style(f"      {line}", "32" if "clean" in line else "33"))
            return
        for item in update.get("content") or ():
            if item.get("type") == "content":
                text = str((item.get("content") or {}).get("text", ""))
                self.block(_tail(text), indent="      ")


def verification_lines(verification: Mapping[str, Any], *, root: Path | None) -> list[str]:
    """What a verification verdict (``rawOutput.verification``, docs/verification.md) says,
    per file: the sources that checked it (``ruff: clean for version 3 of
    inventory/money.py``, ``ruff: 1 new problem for version 3 of app.py`` then each problem),
    and each source that did not (``mypy: unknown for version 3 of app.py (did not report
    ...)``). The version is the editor version the agent's edit produced
    (``the text on disk`` for a file that was not open)."""
    lines: list[str] = []
    for file in verification.get("files") or ():
        if not isinstance(file, Mapping):
            continue
        name = _display(str(file.get("path", "?")), root)
        version = file.get("version")
        which = f"version {version} of {name}" if version is not None else f"{name} (on disk)"
        new = [d for d in file.get("new") or () if isinstance(d, Mapping)]
        uncompared = [d for d in file.get("uncompared") or () if isinstance(d, Mapping)]
        preexisting = int(file.get("preexisting") or 0)
        sources = [src for src in file.get("sources") or () if isinstance(src, Mapping)]
        checked = ", ".join(str(s.get("name")) for s in sources if s.get("status") == "checked")
        if checked and new:
            count = f"{len(new)} new problem{'' if len(new) == 1 else 's'}"
            lines.append(f"{checked}: {count} for {which}")
        elif checked and uncompared:
            lines.append(f"{checked}: {len(uncompared)} problems (not compared) for {which}")
        elif checked and preexisting:
            lines.append(f"{checked}: no new problems for {which} ({preexisting} pre-existing)")
        elif checked:
            lines.append(f"{checked}: clean for {which}")
        for source in sources:
            if source.get("status") != "checked":
                reason = f" ({source['reason']})" if source.get("reason") else ""
                lines.append(f"{source.get('name', '?')}: unknown for {which}{reason}")
        for diagnostic in new:
            code = f" {diagnostic['code']}" if diagnostic.get("code") else ""
            lines.append(
                f"  {diagnostic.get('severity', 'error')} {name}:{diagnostic.get('line')}:"
                f"{diagnostic.get('character')}{code} {diagnostic.get('message', '')}"
            )
    return lines


def _display(path: str, root: Path | None) -> str:
    if root is not None:
        try:
            return Path(path).relative_to(root).as_posix()
        except ValueError:
            pass
    return path


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
