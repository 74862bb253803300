"""The LSP door never writes to stdout: in stdio mode stdout is the JSON-RPC wire."""

from __future__ import annotations

import ast
from pathlib import Path

import lsp_agent.lsp

DOOR = Path(lsp_agent.lsp.__file__).parent


def _writes_stdout(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id == "print"
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Attribute)
        and func.value.attr in {"stdout", "__stdout__"}
        and isinstance(func.value.value, ast.Name)
        and func.value.value.id == "sys"
    )


def _stdout_writes(tree: ast.AST) -> list[int]:
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _writes_stdout(node.func)
    )


def test_no_module_of_the_lsp_door_prints_or_writes_stdout() -> None:
    found = {
        f"{path.name}:{line}"
        for path in sorted(DOOR.rglob("*.py"))
        for line in _stdout_writes(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert found == set()


def test_the_check_finds_a_print() -> None:
    assert _stdout_writes(ast.parse("import sys\nprint('x')\nsys.stdout.write('y')\n")) == [2, 3]
