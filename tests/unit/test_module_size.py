"""The project's size rule: no module of the package is longer than 600 lines (one purpose per
module; a module that outgrows it is split along a real seam)."""

from __future__ import annotations

from pathlib import Path

import lsp_agent

MAX_LINES = 600
PACKAGE = Path(lsp_agent.__file__).parent


def _line_count(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def test_no_module_is_over_600_lines() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50  # the package was found, not an empty folder
    over = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in modules
        if (lines := _line_count(path)) > MAX_LINES
    }
    assert over == {}, f"modules over {MAX_LINES} lines: {over}"


def test_the_count_sees_a_long_file(tmp_path: Path) -> None:
    long = tmp_path / "long.py"
    long.write_text("x = 1\n" * (MAX_LINES + 1))
    assert _line_count(long) == MAX_LINES + 1
