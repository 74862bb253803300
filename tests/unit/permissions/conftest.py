"""A small project on disk for permission tests: sources, secrets, symlinks out of the root, a
sibling directory whose name shares the root's prefix, a fake home, and a git repository."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True, kw_only=True)
class Layout:
    """Paths of the test workspace (all resolved)."""

    base: Path
    root: Path
    home: Path
    outside: Path
    evil: Path

    def fill(self, text: str, sentinel: Path) -> str:
        """Replace ``{R}`` (root), ``{S}`` (sentinel), ``{V}`` (victim file), ``{O}``
        (outside dir), ``{E}`` (sibling "proj-evil"), ``{H}`` (home) in ``text``."""
        return (
            text.replace("{R}", str(self.root))
            .replace("{S}", str(sentinel))
            .replace("{V}", str(self.root / "victim.txt"))
            .replace("{O}", str(self.outside))
            .replace("{E}", str(self.evil))
            .replace("{H}", str(self.home))
        )


VICTIM_TEXT = "original victim text\n"


def make_layout(base: Path) -> Layout:
    """Create the workspace under ``base``."""
    base = base.resolve()
    root = base / "proj"
    home = base / "home"
    outside = base / "outside"
    evil = base / "proj-evil"
    for d in (
        root / "src",
        root / "docs",
        root / "sub" / "deep",
        root / "dash",
        root / "cmp" / "a",
        root / "cmp" / "b" / "s",
        home / ".ssh",
        outside,
        evil,
    ):
        d.mkdir(parents=True, exist_ok=True)
    files = {
        root / "src" / "app.py": "def total(xs):\n    return sum(xs)\n",
        root / "src" / "util.py": "VALUE = 1\n",
        root / "docs" / "guide.md": "# Guide\n",
        root / "README.md": "# Project\nTODO: write docs\n",
        root / "notes.txt": "b\na\nb\n",
        root / "data.json": '{"name": "demo", "items": [1, 2]}\n',
        root / "package.json": '{"name": "demo", "scripts": {"test": "true"}}\n',
        root / ".env": "SECRET=hunter2\n",
        root / ".env.example": "SECRET=\n",
        root / "victim.txt": VICTIM_TEXT,
        root / "sub" / "deep" / "x.txt": "deep\n",
        root / "dash" / "-rf": "",
        root / "dash" / "keep.txt": "keep\n",
        root / "cmp" / "b" / "s" / "secret.txt": "",
        home / ".ssh" / "id_rsa": "PRIVATE\n",
        home / ".bashrc": "# rc\n",
        home / "notes.txt": "home notes\n",
        outside / "secret.txt": "outside secret\n",
        evil / "secret.txt": "evil sibling\n",
    }
    for path, text in files.items():
        path.write_text(text)
    links = {
        root / "link-out": outside,
        root / "link-in": root / "src",
        root / "link-home": home,
        # ``diff -r cmp/a cmp/b`` follows this link and prints the outside file.
        root / "cmp" / "a" / "s": outside,
    }
    for link, target in links.items():
        if not link.is_symlink():
            link.symlink_to(target)
    if not (root / ".git").exists():
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(home)}
        for args in (
            ["git", "init", "-q", "-b", "main"],
            [
                "git",
                "-c",
                "user.email=t@example.com",
                "-c",
                "user.name=T",
                "add",
                "src",
                "README.md",
            ],
            [
                "git",
                "-c",
                "user.email=t@example.com",
                "-c",
                "user.name=T",
                "commit",
                "-q",
                "-m",
                "init",
            ],
        ):
            subprocess.run(args, cwd=root, env=env, check=True, capture_output=True)
    return Layout(base=base, root=root, home=home, outside=outside, evil=evil)


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Layout:
    """One workspace per test module (decisions do not change it)."""
    return make_layout(tmp_path_factory.mktemp("perm"))
