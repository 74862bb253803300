"""Settings problems as LSP ``Diagnostic`` objects (plain dicts; the core imports no LSP types).

The door publishes the result of :func:`problems_to_diagnostics` with
``textDocument/publishDiagnostics`` — one notification per URI, including empty lists for
settings files that no longer have problems — and logs problems without a file (settings sent
by the editor) with ``window/logMessage``/``window/showMessage``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from lsp_agent.config.problems import SettingsProblem

PositionEncoding = Literal["utf-8", "utf-16", "utf-32"]

SEVERITY = {"error": 1, "warning": 2, "information": 3}
"""LSP ``DiagnosticSeverity`` values."""


def problems_to_diagnostics(
    problems: Iterable[SettingsProblem],
    *,
    files: Iterable[Path] = (),
    encoding: PositionEncoding = "utf-16",
) -> dict[str, list[dict[str, Any]]]:
    """Map file URI → list of LSP ``Diagnostic`` dicts (``range``, ``severity``, ``source``,
    ``message``). Every path in ``files`` gets an entry (maybe empty) so stale diagnostics are
    cleared. Characters are converted from code points to ``encoding`` using the file text the
    problem refers to. Problems without a path are left out (see the module docstring)."""
    out: dict[str, list[dict[str, Any]]] = {Path(f).absolute().as_uri(): [] for f in files}
    for problem in problems:
        if problem.path is None:
            continue
        uri = problem.path.absolute().as_uri()
        lines = (problem.text or "").splitlines()
        out.setdefault(uri, []).append(
            {
                "range": {
                    "start": _position(problem.start, lines, encoding),
                    "end": _position(problem.end, lines, encoding),
                },
                "severity": SEVERITY[problem.severity],
                "source": "lsp-agent",
                "message": problem.message,
            }
        )
    return out


def _position(
    where: tuple[int, int], lines: list[str], encoding: PositionEncoding
) -> dict[str, int]:
    line, character = where
    if encoding != "utf-32" and 0 <= line < len(lines):
        prefix = lines[line][:character]
        if encoding == "utf-16":
            character = len(prefix.encode("utf-16-le")) // 2
        else:
            character = len(prefix.encode("utf-8", "surrogatepass"))
    return {"line": line, "character": character}
