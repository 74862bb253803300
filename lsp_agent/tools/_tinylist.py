"""Glob's listing of a tiny folder that has no ignore rules, made in this process.

Starting ripgrep costs ≈ 2.5 ms even when the folder holds ten files (its executable is
loaded, relocated and torn down for every run; ``rg --version`` alone is ≈ 1.4 ms of CPU
here), while walking ten files costs ≈ 0.1 ms. Where ripgrep's answer is known without
running it, :func:`tiny_listing` gives it.

That is the case when no ignore rule can apply: what ``rg --files --hidden`` with the
version-control exclusions of :func:`lsp_agent.tools._rg.exclude_args` lists is then every
regular file under the folder (symbolic links are not followed, so neither links to files
nor links to folders are listed), except entries named like a version-control directory.
Ignore rules come from ``.ignore`` and ``.rgignore`` files in the folder, in the folders
inside it and in every folder above it; git's rules (``.gitignore`` files,
``.git/info/exclude``, the user's ``core.excludesFile``) apply only inside a git repository,
which a ``.git`` entry in the folder, inside it or above it makes (ripgrep's default: it
requires git). ripgrep's configuration file is never read (``--no-config``). So the walk
gives up — and the caller runs ripgrep — when a ``.ignore``, ``.rgignore`` or ``.git`` entry
exists anywhere it looks, when the tree is not tiny, when a folder cannot be read, when a
name is not valid UTF-8 (ripgrep matches bytes, Glob's matcher text), or when a name holds a
newline (the listing is read line by line: such a name would come out as two paths, the
second relative to the process's folder). A ``.gitignore`` file
outside a repository (pytest writes one into ``.pytest_cache``) is listed like any file.
"""

from __future__ import annotations

import os
from pathlib import Path

from lsp_agent.tools import _rg
from lsp_agent.tools._rg import VCS_DIRS

IGNORE_NAMES = frozenset({".ignore", ".rgignore", ".git"})
"""Names whose presence (as any kind of entry) in the folder, inside it or above it makes
:func:`tiny_listing` leave the listing to ripgrep."""

_SKIPPED = frozenset(VCS_DIRS)


def tiny_listing(root: Path) -> bytes | None:
    """What ``rg --files`` lists under ``root`` (an absolute, resolved directory) with
    Glob's flags, as ripgrep writes it — absolute paths, each followed by ``\\n``, in no
    particular order (Glob orders its results itself) — or ``None`` when that is not known
    for sure without running ripgrep (see the module docstring): more than
    :data:`~lsp_agent.tools._rg.TINY_FILES` files or folders, a ``.ignore``, ``.rgignore``
    or ``.git`` entry in or above ``root``, an unreadable folder, a name that is not UTF-8 or
    holds a newline.

    Costs one ``lstat`` per name in :data:`IGNORE_NAMES` per folder above ``root`` and one
    ``scandir`` per folder inside it (≈ 0.1 ms for ten files); never raises ``OSError``.
    """
    base = str(root)
    if base == os.sep or not os.path.isabs(base) or "\n" in base or _rules_above(root):
        return None
    files = _walk(base)
    if files is None:
        return None
    if not files:
        return b""
    try:
        # Strict: a name that is not UTF-8 (kept by the file system's surrogate escapes)
        # fails here, and ripgrep decides instead.
        return ("\n".join(files) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return None


def _rules_above(root: Path) -> bool:
    """Whether a folder above ``root`` holds an entry named in :data:`IGNORE_NAMES`."""
    return any(
        os.path.lexists(os.path.join(parent, name))
        for parent in root.parents
        for name in IGNORE_NAMES
    )


def _walk(base: str) -> list[str] | None:
    """The regular files under ``base`` outside version-control folders, or ``None`` when
    the tree is not tiny, holds an entry named in :data:`IGNORE_NAMES` or a name with a
    newline, or cannot be read."""
    files: list[str] = []
    folders = 1
    pending = [base]
    try:
        while pending:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    name = entry.name
                    if name in IGNORE_NAMES or "\n" in name:
                        return None
                    if name in _SKIPPED:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        folders += 1
                        pending.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        files.append(entry.path)
                    if folders > _rg.TINY_FILES or len(files) > _rg.TINY_FILES:
                        return None
    except OSError:
        return None
    return files


_MAX_REMEMBERED = 64


class TinyListings:
    """:func:`tiny_listing` for one tool, which remembers the folders it gave up on (up to
    64, the oldest forgotten first) and does not walk them again: a large folder would
    cost a walk of :data:`~lsp_agent.tools._rg.TINY_FILES` entries per search before
    ripgrep runs anyway, and a folder with ignore rules usually keeps them. A folder that
    later becomes tiny and free of them keeps being listed by ripgrep, which is always
    right, only slower."""

    def __init__(self) -> None:
        self._gave_up: dict[str, None] = {}

    def listing(self, root: Path) -> bytes | None:
        """:func:`tiny_listing` of ``root``, or ``None`` at once for a folder it gave up on
        before."""
        key = str(root)
        if key in self._gave_up:
            return None
        listed = tiny_listing(root)
        if listed is None:
            self._gave_up[key] = None
            if len(self._gave_up) > _MAX_REMEMBERED:
                del self._gave_up[next(iter(self._gave_up))]
        return listed
