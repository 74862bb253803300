"""Problems in settings sources, placed at the exact range of the offending value: the
:class:`SettingsProblem` every loader reports (for an LSP diagnostic and a log line) and the
:class:`Reporter` that validation uses to place them by JSON path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from lsp_agent.config.jsonpos import JsonPath, Span, position

Severity = Literal["error", "warning", "information"]


@dataclass(frozen=True, kw_only=True)
class SettingsProblem:
    """One problem in a settings source, for an LSP diagnostic and a log line.

    ``path`` is the settings file (``None`` for settings sent by the editor); ``start`` and
    ``end`` are 0-based ``(line, character)`` with characters counted in code points (the LSP
    door converts them to the negotiated encoding with ``text``, the file text they refer to).
    """

    path: Path | None
    start: tuple[int, int]
    end: tuple[int, int]
    message: str
    severity: Severity = "error"
    text: str | None = field(default=None, repr=False, compare=False)

    def log_line(self) -> str:
        """``file:line:col: severity: message`` (1-based line and column, as editors print)."""
        where = str(self.path) if self.path else "editor settings"
        return f"{where}:{self.start[0] + 1}:{self.start[1] + 1}: {self.severity}: {self.message}"


class Reporter:
    """Collects :class:`SettingsProblem` s for one source, placing each at the span of the
    JSON path it names (or of its nearest enclosing value that has one)."""

    def __init__(self, *, path: Path | None, text: str, spans: dict[JsonPath, Span]) -> None:
        self.path = path
        self.text = text
        self.spans = spans
        self.problems: list[SettingsProblem] = []

    def at(
        self, where: JsonPath, message: str, severity: Severity = "error", *, key: bool = False
    ) -> None:
        span = self.spans.get(where)
        while span is None and where:
            where = where[:-1]
            span = self.spans.get(where)
        if span is None:
            start = end = 0
        elif key and span.key_start is not None and span.key_end is not None:
            start, end = span.key_start, span.key_end
        else:
            start, end = span.start, span.end
        self.problems.append(
            SettingsProblem(
                path=self.path,
                start=position(self.text, start),
                end=position(self.text, end),
                message=message,
                severity=severity,
                text=self.text,
            )
        )


def problem_at_start(
    path: Path | None, message: str, *, severity: Severity = "error", text: str | None = None
) -> SettingsProblem:
    """A problem for a whole source, placed at its first character."""
    return SettingsProblem(
        path=path, start=(0, 0), end=(0, 0), message=message, severity=severity, text=text
    )
