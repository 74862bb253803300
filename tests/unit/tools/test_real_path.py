"""resolve_file_path / real_path: the same path as ``Path.resolve`` for every kind of name (the
Linux shortcut reads the kernel's answer for an existing file; the rest falls back)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.tools._paths import (
    real_path,
    resolve_file_path,
    resolve_search_path,
    search_target,
)
from lsp_agent.tools.base import ToolError


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "f.py").write_text("x = 1\n")
    (tmp_path / "dirlink").symlink_to(tmp_path / "real")
    (tmp_path / "filelink.py").symlink_to(tmp_path / "real" / "sub" / "f.py")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "g.py")
    (tmp_path / "relative").symlink_to("real/sub")
    os.mkfifo(tmp_path / "fifo")
    return tmp_path


NAMES = [
    "real/sub/f.py",
    "dirlink/sub/f.py",
    "filelink.py",
    "dangling",
    "relative/f.py",
    "relative/../sub/./f.py",
    "dirlink/sub/../sub/f.py",
    "real/sub/missing.py",
    "dirlink/missing/deeper.py",
    "real/sub",
    "dirlink/",
    "fifo",
    "real/sub/f.py/",
    "filelink.py/..",
]


@pytest.mark.parametrize("name", NAMES)
def test_real_path_is_what_resolve_gives(tree: Path, name: str) -> None:
    path = Path(os.path.join(tree, name))
    assert real_path(path) == path.resolve()
    assert resolve_file_path(os.path.join(tree, name)) == path.resolve()


def test_a_fifo_is_resolved_without_blocking(tree: Path) -> None:
    # Opening a FIFO for reading would wait for a writer; the name is only looked up.
    assert real_path(tree / "fifo") == (tree / "fifo").resolve()


def test_a_symlink_loop_fails_as_resolve_does(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises((OSError, RuntimeError)) as expected:
        (tmp_path / "a").resolve()
    with pytest.raises((OSError, RuntimeError)) as got:
        real_path(tmp_path / "a")
    assert type(got.value) is type(expected.value)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("name", ["a", "a/inside.py"])
def test_a_tool_path_through_a_symlink_loop_is_a_tool_error(tmp_path: Path, name: str) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for resolve in (
        lambda: resolve_file_path(str(tmp_path / name)),
        lambda: search_target(name, tmp_path),
        lambda: resolve_search_path(str(tmp_path / name), tmp_path),
    ):
        with pytest.raises(ToolError, match="symbolic link loop") as caught:
            resolve()
        assert name in str(caught.value)


@pytest.mark.parametrize("bad", ["", "  ", "relative/x.py", "/a\x00b"])
def test_resolve_file_path_refuses_what_it_refused(bad: str) -> None:
    with pytest.raises(ToolError):
        resolve_file_path(bad)
