"""A temporary tree with every kind of memory file, and a spec over it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.context.memory.loader import MemorySpec


@dataclass
class Tree:
    """``top/ws`` is the workspace (session folder); ``top`` an ancestor above it; ``home`` the
    user's home; ``managed`` the organisation's file."""

    base: Path
    home: Path
    top: Path
    ws: Path
    managed: Path

    def write(self, path: Path, text: str | bytes) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def spec(self, **changes: Any) -> MemorySpec:
        spec = MemorySpec(
            cwd=self.ws,
            roots=(self.ws,),
            home=self.home,
            managed=self.managed,
            trusted=True,
        )
        return replace(spec, **changes)

    def mine(self, paths: Any) -> list[str]:
        """Paths below the test's folder, relative to it (a stray CLAUDE.md above the
        temporary folder must not break the tests)."""
        out = []
        for p in paths:
            path = p.path if hasattr(p, "path") else p
            if self.base in path.parents:
                out.append(path.relative_to(self.base).as_posix())
        return out


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    top = tmp_path / "top"
    t = Tree(
        base=tmp_path,
        home=tmp_path / "home",
        top=top,
        ws=top / "ws",
        managed=tmp_path / "etc" / "CLAUDE.md",
    )
    t.ws.mkdir(parents=True)
    t.home.mkdir()
    return t
