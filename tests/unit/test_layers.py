"""The package graph of ``lsp_agent`` has no cycle.

import-linter's layers contract (pyproject.toml) checks the declared order; this test checks
the weaker property that survives any reordering: no chain of imports leads from a subpackage
back to itself. It reads the real import graph with grimp (the library import-linter uses), so
imports inside functions and under ``TYPE_CHECKING`` count too.
"""

from __future__ import annotations

import grimp

ROOT = "lsp_agent"


def _package_of(module: str) -> str:
    """``lsp_agent.tools.edit`` → ``lsp_agent.tools``; top-level modules stand for themselves."""
    return ".".join(module.split(".")[:2])


def package_graph() -> dict[str, set[str]]:
    """Edges between the direct children of ``lsp_agent`` (the root module itself left out)."""
    graph = grimp.build_graph(ROOT)
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        source = _package_of(module)
        for imported in graph.find_modules_directly_imported_by(module):
            target = _package_of(imported)
            if ROOT in (source, target) or source == target:
                continue
            edges.setdefault(source, set()).add(target)
            edges.setdefault(target, set())
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``edges`` as a path that starts and ends at the same node, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_find_cycle_finds_a_cycle_and_accepts_a_dag() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_between_subpackages() -> None:
    edges = package_graph()
    assert "lsp_agent.protocol" in edges, "the graph was not read"
    assert edges["lsp_agent.sessions"], "the graph has no edges: grimp found no imports"
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle between packages: " + " -> ".join(cycle or [])


def test_the_vocabulary_imports_nothing_of_the_project() -> None:
    assert package_graph()["lsp_agent.protocol"] == set()
