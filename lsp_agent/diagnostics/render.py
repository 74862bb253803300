"""Turning a verdict into text for the model and JSON for clients.

The attachment is compact and ordered by what the model must act on: new errors first (with
``file:line:column``, source, code, message and the code line), then new warnings, then what
was fixed, a count of pre-existing problems, and every source that did not report on the
exact text ("unknown", never older results in its place).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsp_agent.diagnostics.model import Diagnostic
from lsp_agent.diagnostics.positions import split_lines
from lsp_agent.diagnostics.verify import FileVerdict, Verdict

MESSAGE_CHARS = 240
CODE_LINE_CHARS = 160
OPEN_TAG = "<diagnostics-after-edit>"
CLOSE_TAG = "</diagnostics-after-edit>"


def display_path(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when it is inside it, else absolute."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _message(diagnostic: Diagnostic) -> str:
    first = diagnostic.message.strip().splitlines()[0] if diagnostic.message.strip() else ""
    return first if len(first) <= MESSAGE_CHARS else first[: MESSAGE_CHARS - 1] + "…"


def _label(diagnostic: Diagnostic) -> str:
    return f"{diagnostic.source} {diagnostic.code}" if diagnostic.code else diagnostic.source


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _counts(items: Sequence[Diagnostic]) -> str:
    errors = sum(1 for d in items if d.severity == 1)
    others = len(items) - errors
    parts = []
    if errors:
        parts.append(_plural(errors, "error"))
    if others:
        parts.append(_plural(others, "warning/info"))
    return ", ".join(parts) or "none"


def _new_counts(items: Sequence[Diagnostic]) -> str:
    errors = sum(1 for d in items if d.severity == 1)
    others = len(items) - errors
    parts = []
    if errors:
        parts.append(_plural(errors, "new error"))
    if others:
        parts.append(_plural(others, "new warning") + "/info")
    return ", ".join(parts) or "no new problems"


def _file_header(verdict: FileVerdict, name: str) -> str:
    target = verdict.target
    where = f"editor version {target.version}" if target.version is not None else "disk"
    checked = ", ".join(s.channel for s in verdict.checked)
    facts = [_new_counts(verdict.new) if checked else "not checked"]
    if verdict.fixed:
        facts.append(f"{len(verdict.fixed)} fixed")
    if verdict.preexisting:
        facts.append(f"{len(verdict.preexisting)} pre-existing")
    if verdict.uncompared:
        facts.append(f"{len(verdict.uncompared)} not compared")
    by = f"checked by {checked}" if checked else "no source reported"
    return f"{name} ({where}; {by}): {', '.join(facts)}"


def render_attachment(verdict: Verdict, *, cwd: Path, max_listed: int) -> str | None:
    """The text appended to the next request after a batch of edits, or ``None`` when no
    changed file has any diagnostics source."""
    files = [f for f in verdict.files if f.sources]
    if not files:
        return None
    lines = [
        OPEN_TAG,
        "Diagnostics of the exact text you just wrote (computed for that version; older "
        "results are never shown as current):",
    ]
    listed = 0
    for verdict_file in files:
        name = display_path(verdict_file.target.path, cwd)
        text_lines = split_lines(verdict_file.target.text)
        lines.append(_file_header(verdict_file, name))
        shown = 0
        for diagnostic in verdict_file.new:
            if listed >= max_listed:
                break
            listed += 1
            shown += 1
            where = f"{name}:{diagnostic.line + 1}:{diagnostic.range.start.character + 1}"
            lines.append(
                f"  NEW {diagnostic.severity_name} {where} [{_label(diagnostic)}] "
                f"{_message(diagnostic)}"
            )
            if 0 <= diagnostic.line < len(text_lines):
                code = text_lines[diagnostic.line].rstrip()
                if len(code) > CODE_LINE_CHARS:
                    code = code[: CODE_LINE_CHARS - 1] + "…"
                lines.append(f"      {diagnostic.line + 1} | {code}")
        if shown < len(verdict_file.new):
            hidden = _plural(len(verdict_file.new) - shown, "more new problem")
            lines.append(f"  ({hidden} not listed)")
        for diagnostic in verdict_file.uncompared[: max(0, max_listed - listed)]:
            listed += 1
            lines.append(
                f"  {diagnostic.severity_name} {name}:{diagnostic.line + 1}:"
                f"{diagnostic.range.start.character + 1} [{_label(diagnostic)}] "
                f"{_message(diagnostic)} (no earlier report to compare with)"
            )
        if verdict_file.fixed:
            fixed = "; ".join(
                f"{_label(d)} {_message(d)} (was line {d.line + 1})" for d in verdict_file.fixed[:5]
            )
            more = len(verdict_file.fixed) - 5
            lines.append(f"  fixed: {fixed}" + (f"; and {more} more" if more > 0 else ""))
        if verdict_file.preexisting:
            lines.append(f"  pre-existing (not caused by you): {_counts(verdict_file.preexisting)}")
        for source in verdict_file.unknown:
            lines.append(
                f"  unknown: {source.channel} {source.reason}; so this version is unverified by "
                f"{source.channel} (older results are not used)"
            )
    lines.append(CLOSE_TAG)
    return "\n".join(lines)


def summary_title(verdict: Verdict, *, cwd: Path) -> str:
    """A one-line title for the session update ("Diagnostics: 1 new error in app.py")."""
    files = [f for f in verdict.files if f.sources]
    names = ", ".join(os.path.basename(str(f.target.path)) for f in files[:3])
    if len(files) > 3:
        names += f" and {len(files) - 3} more"
    errors = verdict.new_errors
    if errors:
        return f"Diagnostics: {_plural(errors, 'new error')} in {names}"
    if not verdict.complete:
        unknown = sorted({s.channel for f in files for s in f.unknown})
        return f"Diagnostics: unknown for {names} ({', '.join(unknown)} did not report)"
    other = sum(len(f.new) for f in files)
    if other:
        return f"Diagnostics: {_plural(other, 'new warning')} in {names}"
    return f"Diagnostics: no new problems in {names}"


def _diagnostic_json(diagnostic: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {
        "line": diagnostic.line + 1,
        "character": diagnostic.range.start.character + 1,
        "endLine": diagnostic.range.end.line + 1,
        "endCharacter": diagnostic.range.end.character + 1,
        "severity": diagnostic.severity_name,
        "source": diagnostic.source,
        "message": diagnostic.message,
    }
    if diagnostic.code is not None:
        out["code"] = diagnostic.code
    return out


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """The verdict as JSON for clients (ACP conventions: absolute paths, 1-based lines and
    characters in code points)."""
    return {
        "newErrors": verdict.new_errors,
        "complete": verdict.complete,
        "elapsedMs": round(verdict.elapsed * 1000, 1),
        "files": [
            {
                "path": str(f.target.path),
                "version": f.target.version,
                "sources": [
                    {
                        "name": s.channel,
                        "status": s.status,
                        **({"reason": s.reason} if s.reason else {}),
                    }
                    for s in f.sources
                ],
                "new": [_diagnostic_json(d) for d in f.new],
                "fixed": [_diagnostic_json(d) for d in f.fixed],
                "preexisting": len(f.preexisting),
                "uncompared": [_diagnostic_json(d) for d in f.uncompared],
            }
            for f in verdict.files
            if f.sources
        ],
    }


def render_nudge(files: Sequence[FileVerdict], *, cwd: Path, max_listed: int) -> str:
    """The end-of-turn message asking the model to fix the new errors it left."""
    lines = [
        "Before you finish: your edits left new errors, reported by the diagnostics for the "
        "exact text you wrote:"
    ]
    listed = 0
    for verdict_file in files:
        name = display_path(verdict_file.target.path, cwd)
        for diagnostic in verdict_file.new_errors:
            if listed >= max_listed:
                break
            listed += 1
            lines.append(
                f"- {name}:{diagnostic.line + 1}:{diagnostic.range.start.character + 1} "
                f"[{_label(diagnostic)}] {_message(diagnostic)}"
            )
    lines.append(
        "Fix them, or if one must stay, say why. Do not claim that checks pass while these "
        "errors remain."
    )
    return "\n".join(lines)
