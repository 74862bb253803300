"""display_path: the title path is what ``relative_to`` gives (the POSIX shortcut takes the
parts instead), the absolute path outside the folder or for the folder itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.tools._paths import display_path


def _by_relative_to(path: Path, cwd: Path) -> str:
    try:
        relative = path.relative_to(cwd)
    except ValueError:
        return str(path)
    return str(relative) if str(relative) != "." else str(path)


PATHS = ["/", "/a", "/a/b", "/a/b/c.py", "/a/bc", "/a/b/c/d.py", "/x/y", "a/b", "a"]


@pytest.mark.parametrize("cwd", PATHS)
@pytest.mark.parametrize("path", PATHS)
def test_display_path_matches_relative_to(path: str, cwd: str) -> None:
    assert display_path(Path(path), Path(cwd)) == _by_relative_to(Path(path), Path(cwd))


def test_display_path_cases() -> None:
    assert display_path(Path("/p/src/m.py"), Path("/p")) == "src/m.py"
    assert display_path(Path("/p"), Path("/p")) == "/p"
    assert display_path(Path("/pq/m.py"), Path("/p")) == "/pq/m.py"
    assert display_path(Path("/m.py"), Path("/")) == "m.py"
