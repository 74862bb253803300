"""Reading LSP diagnostics: conversion, clamping, bad input, caps."""

from __future__ import annotations

from typing import Any

import pytest

from lsp_agent.diagnostics.model import (
    InvalidDiagnosticError,
    parse_diagnostic,
    parse_diagnostics,
)
from lsp_agent.diagnostics.positions import split_lines


def raw(line: int, start: int, end: int, **extra: Any) -> dict[str, Any]:
    return {
        "range": {
            "start": {"line": line, "character": start},
            "end": {"line": line, "character": end},
        },
        "message": "boom",
        **extra,
    }


def test_positions_convert_from_utf16_to_code_points() -> None:
    lines = split_lines("x = '😀'; y\n")
    d = parse_diagnostic(
        raw(0, 10, 11, severity=2, code=123), lines=lines, encoding="utf-16", default_source="s"
    )
    assert (d.range.start.character, d.range.end.character) == (9, 10)
    assert d.severity_name == "warning"
    assert d.code == "123"
    assert d.source == "s"
    assert not d.clamped


def test_missing_severity_counts_as_error_and_source_is_kept() -> None:
    d = parse_diagnostic(raw(0, 0, 1, source="Ruff"), lines=None, default_source="x")
    assert d.severity == 1
    assert d.source == "Ruff"


def test_ranges_past_the_end_are_clamped_and_flagged() -> None:
    lines = split_lines("ab\ncd")
    d = parse_diagnostic(raw(7, 3, 9), lines=lines, encoding="utf-16", default_source="s")
    assert (d.range.start.line, d.range.start.character) == (1, 2)
    assert d.clamped
    within = parse_diagnostic(raw(0, 1, 5), lines=lines, encoding="utf-16", default_source="s")
    assert within.range.end.character == 2
    assert within.clamped


def test_end_of_text_without_final_newline_is_not_out_of_range() -> None:
    lines = split_lines("ab")
    d = parse_diagnostic(
        {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
            "message": "m",
        },
        lines=lines,
        default_source="s",
    )
    assert not d.clamped


@pytest.mark.parametrize(
    "bad",
    [
        "text",
        {"message": "no range"},
        {
            "range": {"start": {"line": "0", "character": 0}, "end": {"line": 0, "character": 0}},
            "message": "m",
        },
        {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "message": 3,
        },
        {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "message": "m",
            "severity": 9,
        },
        {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "message": "m",
            "code": [1],
        },
    ],
)
def test_malformed_diagnostics_are_rejected(bad: Any) -> None:
    with pytest.raises(InvalidDiagnosticError):
        parse_diagnostic(bad, lines=None, default_source="s")


def test_lists_skip_invalid_entries_and_keep_the_most_severe_under_the_cap() -> None:
    items = [raw(i, 0, 1, severity=2) for i in range(5)] + [raw(9, 0, 1, severity=1), "junk"]
    parsed, truncated, invalid = parse_diagnostics(items, lines=None, default_source="s", limit=3)
    assert invalid == 1
    assert truncated == 3
    assert parsed[0].severity == 1
    assert len(parsed) == 3


def test_a_non_list_is_one_invalid_entry() -> None:
    assert parse_diagnostics({"x": 1}, lines=None, default_source="s", limit=3) == ((), 0, 1)
