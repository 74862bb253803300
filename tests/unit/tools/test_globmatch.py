"""The glob matcher Glob filters ripgrep's file list with."""

from __future__ import annotations

import pytest

from lsp_agent.tools._globmatch import compile_glob
from lsp_agent.tools.base import ToolError

PATHS = [
    "a.py",
    "src/b.py",
    "src/deep/c.py",
    "tests/test_x.py",
    "web/app.ts",
    "web/view.tsx",
    "web/style.css",
    "!bang.txt",
    "data[1].csv",
]


def matching(pattern: str) -> list[str]:
    regex = compile_glob(pattern)
    return [path for path in PATHS if regex.fullmatch(path)]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("*.py", ["a.py", "src/b.py", "src/deep/c.py", "tests/test_x.py"]),
        ("**/*.py", ["a.py", "src/b.py", "src/deep/c.py", "tests/test_x.py"]),
        ("src/*.py", ["src/b.py"]),
        ("/src/*.py", ["src/b.py"]),
        ("src/**/*.py", ["src/b.py", "src/deep/c.py"]),
        ("src/**", ["src/b.py", "src/deep/c.py"]),
        ("**/*.{ts,tsx}", ["web/app.ts", "web/view.tsx"]),
        ("web/*.{t{s,sx},css}", ["web/app.ts", "web/view.tsx", "web/style.css"]),
        # a name pattern matches file names, not directory names
        ("*test*", ["tests/test_x.py"]),
        ("?.py", ["a.py", "src/b.py", "src/deep/c.py"]),
        ("[ab].py", ["a.py", "src/b.py"]),
        ("[!a].py", ["src/b.py", "src/deep/c.py"]),
        ("!bang.txt", ["!bang.txt"]),
        (r"data\[1\].csv", ["data[1].csv"]),
        ("data[1.csv", []),
        ("web/app.ts", ["web/app.ts"]),
    ],
)
def test_patterns(pattern: str, expected: list[str]) -> None:
    assert matching(pattern) == expected


def test_unbalanced_brace_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match="unbalanced"):
        compile_glob("*.{ts,tsx")
