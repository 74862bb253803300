"""Diagnostics as the core sees them, and reading them from LSP JSON.

A :class:`Diagnostic` has a 0-based line/character range counted in Python code points (the
LSP door and the managed-server client convert from the negotiated encoding), a severity
(LSP ``DiagnosticSeverity``: 1 error, 2 warning, 3 information, 4 hint), a message, the
``source`` label the producer gave it (``"Ruff"``, ``"basedpyright"``) and an optional code.

A :class:`Report` is one producer's complete set of diagnostics for one document state: which
producer (``channel``: a managed server's name, or ``"editor"`` for the editor bridge), which
document version and/or text digest it was computed for, and when it arrived.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsp_agent.diagnostics.config import SeverityName
from lsp_agent.diagnostics.positions import PositionEncoding, from_code_points, to_code_points

SEVERITIES: dict[SeverityName, int] = {"error": 1, "warning": 2, "information": 3, "hint": 4}
"""LSP ``DiagnosticSeverity`` values by name."""

SEVERITY_NAMES: dict[int, SeverityName] = {value: name for name, value in SEVERITIES.items()}

EDITOR_CHANNEL = "editor"
"""The channel name of diagnostics that arrive through the editor bridge."""


@dataclass(frozen=True, kw_only=True, order=True)
class Position:
    """A 0-based line and a 0-based character offset in code points."""

    line: int
    character: int


@dataclass(frozen=True, kw_only=True)
class Range:
    """A half-open range ``[start, end)``."""

    start: Position
    end: Position


@dataclass(frozen=True, kw_only=True)
class Diagnostic:
    """One problem report. ``clamped`` says the producer's range went past the end of the
    document and was cut back to it."""

    range: Range
    severity: int
    message: str
    source: str
    code: str | None = None
    clamped: bool = False

    @property
    def severity_name(self) -> SeverityName:
        """``"error"``, ``"warning"``, ``"information"`` or ``"hint"``."""
        return SEVERITY_NAMES.get(self.severity, "error")

    @property
    def line(self) -> int:
        """The 0-based start line."""
        return self.range.start.line

    def key(self) -> tuple[str, str | None, str]:
        """What identifies "the same problem" across edits: source, code and message."""
        return (self.source, self.code, self.message)


@dataclass(frozen=True, kw_only=True)
class Report:
    """One channel's complete diagnostics for one state of one document.

    ``version`` is the document version the producer named (the editor's for the bridge, the
    managed server's own counter for managed servers, translated to ``digest`` on arrival);
    ``digest`` is the SHA-256 (hex) of the text the report was computed for, when known.
    ``received`` is ``time.monotonic()`` at arrival (seconds). ``final`` marks an answer to a
    pull request (``textDocument/diagnostic``): no later report for the same text is expected.
    ``truncated`` counts diagnostics dropped by the per-report cap; ``invalid`` counts
    malformed entries that were skipped.
    """

    path: Path
    channel: str
    diagnostics: tuple[Diagnostic, ...]
    version: int | None = None
    digest: str | None = None
    received: float = 0.0
    final: bool = False
    truncated: int = 0
    invalid: int = 0


class InvalidDiagnosticError(ValueError):
    """An LSP diagnostic object lacks a field or has one of the wrong type."""


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidDiagnosticError(f"{what} must be a number, not {value!r}")
    return int(value)


def _position(raw: Any, what: str) -> tuple[int, int]:
    if not isinstance(raw, Mapping):
        raise InvalidDiagnosticError(f"{what} must be an object")
    return max(0, _int(raw.get("line"), f"{what}.line")), max(
        0, _int(raw.get("character"), f"{what}.character")
    )


def _convert(
    line: int, units: int, lines: Sequence[str] | None, encoding: PositionEncoding
) -> tuple[Position, bool]:
    """Convert one position; returns it and whether it had to be clamped."""
    if lines is None:
        return Position(line=line, character=units), False
    if line >= len(lines):
        # (line count, 0) is the end of a text without a final line break: not out of range.
        last = len(lines) - 1
        past = not (line == len(lines) and units == 0)
        return Position(line=last, character=len(lines[last])), past
    text = lines[line]
    clamped = units > from_code_points(text, len(text), encoding)
    return Position(line=line, character=to_code_points(text, units, encoding)), clamped


def parse_diagnostic(
    raw: Any,
    *,
    lines: Sequence[str] | None,
    encoding: PositionEncoding = "utf-16",
    default_source: str,
) -> Diagnostic:
    """Read one LSP ``Diagnostic`` JSON object.

    ``lines`` are the document's lines (see :func:`~lsp_agent.diagnostics.positions.split_lines`)
    for the text the diagnostic was computed for; positions are converted from ``encoding`` to
    code points and ranges past the end of the document are clamped (``clamped=True``). Without
    ``lines`` positions are taken as code points. A missing severity counts as an error (as
    editors show it); a missing ``source`` becomes ``default_source``. Raises
    :class:`InvalidDiagnosticError` for malformed input.
    """
    if not isinstance(raw, Mapping):
        raise InvalidDiagnosticError("a diagnostic must be an object")
    rng = raw.get("range")
    if not isinstance(rng, Mapping):
        raise InvalidDiagnosticError("range must be an object")
    start_line, start_units = _position(rng.get("start"), "range.start")
    end_line, end_units = _position(rng.get("end"), "range.end")
    message = raw.get("message")
    if not isinstance(message, str):
        raise InvalidDiagnosticError("message must be a string")
    severity_raw = raw.get("severity")
    severity = 1 if severity_raw is None else _int(severity_raw, "severity")
    if severity not in SEVERITY_NAMES:
        raise InvalidDiagnosticError(f"severity must be 1..4, not {severity}")
    source = raw.get("source")
    if source is not None and not isinstance(source, str):
        raise InvalidDiagnosticError("source must be a string")
    code = raw.get("code")
    if code is not None and (isinstance(code, bool) or not isinstance(code, str | int)):
        raise InvalidDiagnosticError("code must be a string or an integer")
    start, clamped_start = _convert(start_line, start_units, lines, encoding)
    end, clamped_end = _convert(end_line, end_units, lines, encoding)
    end = max(end, start)
    return Diagnostic(
        range=Range(start=start, end=end),
        severity=severity,
        message=message,
        source=source or default_source,
        code=None if code is None else str(code),
        clamped=clamped_start or clamped_end,
    )


def parse_diagnostics(
    items: Any,
    *,
    lines: Sequence[str] | None,
    encoding: PositionEncoding = "utf-16",
    default_source: str,
    limit: int,
) -> tuple[tuple[Diagnostic, ...], int, int]:
    """Read a JSON list of LSP diagnostics, keeping at most ``limit`` of them.

    Returns ``(diagnostics, truncated, invalid)``: the parsed diagnostics (most severe first
    when the list had to be cut), how many valid ones were dropped by ``limit`` and how many
    malformed entries were skipped. A non-list counts as one invalid entry.
    """
    if not isinstance(items, list):
        return (), 0, 1
    parsed: list[Diagnostic] = []
    invalid = 0
    for raw in items:
        try:
            parsed.append(
                parse_diagnostic(raw, lines=lines, encoding=encoding, default_source=default_source)
            )
        except InvalidDiagnosticError:
            invalid += 1
    truncated = 0
    if len(parsed) > limit:
        parsed.sort(key=lambda d: (d.severity, d.range.start))
        truncated = len(parsed) - limit
        parsed = parsed[:limit]
    return tuple(parsed), truncated, invalid


def to_lsp_json(diagnostic: Diagnostic) -> dict[str, Any]:
    """The diagnostic as an LSP JSON object with code-point (``utf-32``) positions."""
    out: dict[str, Any] = {
        "range": {
            "start": {
                "line": diagnostic.range.start.line,
                "character": diagnostic.range.start.character,
            },
            "end": {"line": diagnostic.range.end.line, "character": diagnostic.range.end.character},
        },
        "severity": diagnostic.severity,
        "message": diagnostic.message,
        "source": diagnostic.source,
    }
    if diagnostic.code is not None:
        out["code"] = diagnostic.code
    return out
