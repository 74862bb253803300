"""Glob lists a tiny folder without ignore rules in-process: the listing must be exactly what
``rg --files`` prints with Glob's flags, and anything that could make them differ must leave
the listing to ripgrep."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.tools import _tinylist
from lsp_agent.tools import glob as glob_module
from lsp_agent.tools._rg import TINY_FILES, base_args, exclude_args, find_rg
from lsp_agent.tools._tinylist import TinyListings, tiny_listing
from lsp_agent.tools.glob import GlobTool

from .conftest import Env, record_rg_runs


def rg_listing(root: Path) -> list[str]:
    """What ripgrep lists under ``root`` with Glob's flags, sorted."""
    argv = [find_rg(), *base_args(), "--files", *exclude_args(), str(root)]
    out = subprocess.run(argv, cwd=root, capture_output=True, check=False).stdout
    return sorted(out.decode("utf-8").splitlines())


def ours(root: Path) -> list[str] | None:
    listed = tiny_listing(root)
    if listed is None:
        return None
    assert not listed or listed.endswith(b"\n")
    return sorted(listed.decode("utf-8").splitlines())


def build_corpus(root: Path) -> None:
    """Hidden files and folders, links of every kind, a pipe, version-control names as
    folders and as files, empty folders, names with spaces, braces and non-ASCII text."""
    for relative in (
        "README.md",
        "a b/c d.py",
        "pkg/__init__.py",
        "pkg/sub/deep/x.py",
        ".hidden.py",
        ".config/settings.json",
        "pkg/.hg/store",  # a version-control folder below the root: skipped
        "pkg/.svn",  # a file with such a name: skipped too (the globs match any entry)
        ".jj/repo",
        "é/ü.txt",
        "{x}/[y].py",
        "build/out.py",
    ):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    (root / "empty" / "inner").mkdir(parents=True)
    (root / "link-to-file.py").symlink_to(root / "README.md")
    (root / "link-to-dir").symlink_to(root / "pkg")
    (root / "dangling").symlink_to(root / "missing")
    os.mkfifo(root / "pipe")
    # Outside a git repository ripgrep does not apply .gitignore files: they are listed,
    # and so is what they name.
    (root / ".gitignore").write_text("*.py\nbuild/\n")
    (root / "pkg" / ".gitignore").write_text("*\n")


def test_the_listing_is_ripgreps(tmp_path: Path) -> None:
    root = (tmp_path / "tree").resolve()
    root.mkdir()
    build_corpus(root)
    listed = ours(root)
    assert listed is not None
    assert listed == rg_listing(root)
    assert str(root / "pkg/sub/deep/x.py") in listed
    assert str(root / "link-to-file.py") not in listed  # links are not followed
    assert str(root / "build" / "out.py") in listed  # .gitignore applies only in a repository


def test_an_empty_folder_lists_nothing(tmp_path: Path) -> None:
    root = (tmp_path / "tree").resolve()
    root.mkdir()
    assert tiny_listing(root) == b""
    assert rg_listing(root) == []


@pytest.mark.parametrize(
    "relative",
    [".ignore", ".rgignore", ".git", "pkg/sub/.ignore", "pkg/.rgignore", "pkg/.git"],
)
@pytest.mark.parametrize("as_folder", [False, True])
def test_an_ignore_file_or_a_repository_inside_leaves_it_to_ripgrep(
    tmp_path: Path, relative: str, as_folder: bool
) -> None:
    root = (tmp_path / "tree").resolve()
    root.mkdir()
    build_corpus(root)
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if as_folder:
        path.mkdir()
    else:
        path.write_text("*.py\n")
    assert tiny_listing(root) is None


@pytest.mark.parametrize("name", [".ignore", ".rgignore", ".git"])
def test_an_ignore_file_or_a_repository_above_leaves_it_to_ripgrep(
    tmp_path: Path, name: str
) -> None:
    outer = tmp_path.resolve() / "outer"
    root = outer / "mid" / "tree"
    root.mkdir(parents=True)
    build_corpus(root)
    assert tiny_listing(root) is not None
    (outer / name).write_text("*.py\n")
    assert tiny_listing(root) is None
    # ripgrep does apply it: had we listed, the answer would have been wrong.
    if name != ".git":
        assert str(root / "README.md") in rg_listing(root)
        assert str(root / "pkg" / "__init__.py") not in rg_listing(root)


def test_a_folder_that_is_not_tiny_is_left_to_ripgrep(tmp_path: Path) -> None:
    root = (tmp_path / "tree").resolve()
    root.mkdir()
    for index in range(TINY_FILES):
        (root / f"f{index}.py").write_text("")
    assert tiny_listing(root) is not None
    (root / "one-more.py").write_text("")
    assert tiny_listing(root) is None
    root2 = (tmp_path / "folders").resolve()
    for index in range(TINY_FILES):
        (root2 / f"d{index}").mkdir(parents=True)
    assert tiny_listing(root2) is None


def test_a_name_that_is_not_utf8_is_left_to_ripgrep(tmp_path: Path) -> None:
    root = (tmp_path / "tree").resolve()
    root.mkdir()
    (root / "ok.py").write_text("")
    os.close(os.open(os.path.join(os.fsencode(root), b"bad-\xff.py"), os.O_CREAT | os.O_WRONLY))
    assert tiny_listing(root) is None


def test_an_unreadable_folder_is_left_to_ripgrep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = (tmp_path / "tree").resolve()
    (root / "locked").mkdir(parents=True)
    (root / "a.py").write_text("")
    scandir = os.scandir

    def refusing(path: str) -> Any:
        # chmod 0 does not stop a superuser: the refusal the kernel would give, by name.
        if path.endswith("locked"):
            raise PermissionError(13, "Permission denied", path)
        return scandir(path)

    assert tiny_listing(root) is not None
    monkeypatch.setattr(os, "scandir", refusing)
    assert tiny_listing(root) is None


def test_a_folder_given_up_on_is_not_walked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = (tmp_path / "tree").resolve()
    root.mkdir()
    (root / ".ignore").write_text("x\n")
    listings = TinyListings()
    assert listings.listing(root) is None
    walks: list[Path] = []
    monkeypatch.setattr(_tinylist, "tiny_listing", walks.append)
    assert listings.listing(root) is None
    assert walks == []
    assert listings.listing(root / "elsewhere") is None
    assert walks == [root / "elsewhere"]


GLOB_CASES: list[dict[str, Any]] = [
    {"pattern": "**/*.py"},
    {"pattern": "*.py"},
    {"pattern": "pkg/**"},
    {"pattern": "**/x.py"},
    {"pattern": "*"},
    {"pattern": "{x}/*"},
    {"pattern": "*.{py,md}"},
    {"pattern": "README.md"},
    {"pattern": "link-to-file.py"},
    {"pattern": "nothing-*.rs"},
    {"pattern": "sub/**/*.py", "path": "pkg"},
]


@pytest.mark.parametrize("raw", GLOB_CASES)
async def test_glob_answers_as_it_does_with_ripgrep(
    env: Env, raw: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    build_corpus(env.root)
    for index, path in enumerate(sorted(env.root.rglob("*"))):
        if path.is_file() and not path.is_symlink():
            os.utime(path, (1_000_000 + index % 3, 1_000_000 + index % 3))  # ties too
    called = record_rg_runs(monkeypatch, glob_module)
    in_process = await env.run(GlobTool(), raw)
    assert called == []
    monkeypatch.setattr(_tinylist, "tiny_listing", lambda root: None)
    with_rg = await env.run(GlobTool(), raw)
    assert len(called) == 1
    assert in_process.text == with_rg.text
    assert in_process.raw_output == with_rg.raw_output
    assert in_process.content == with_rg.content


def test_the_users_global_git_excludes_apply_only_in_a_repository(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.py\n")
    (home / ".gitconfig").write_text(f"[core]\n\texcludesFile = {home}/.config/git/ignore\n")
    root = (tmp_path / "tree").resolve()
    root.mkdir()
    build_corpus(root)
    argv = [find_rg(), *base_args(), "--files", *exclude_args(), str(root)]
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    out = subprocess.run(argv, cwd=root, capture_output=True, check=False, env=env).stdout
    assert ours(root) == sorted(out.decode("utf-8").splitlines())
    assert str(root / "pkg" / "__init__.py") in out.decode("utf-8")


@pytest.mark.parametrize("where", ["inside", "root"])
def test_a_name_with_a_newline_is_left_to_ripgrep(tmp_path: Path, where: str) -> None:
    # A listing is split at newlines: such a name would come out as two paths, the second
    # relative (Grep's in-process search would open it from the process's folder).
    root = (tmp_path / ("tree" if where == "inside" else "tr\nee")).resolve()
    root.mkdir()
    (root / "ok.py").write_text("")
    if where == "inside":
        (root / "x\nok.py").write_text("")
    assert tiny_listing(root) is None
