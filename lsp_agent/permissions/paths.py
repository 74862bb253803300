"""The path sandbox: roots, containment, protected paths and the write-time re-check.

Every path is judged after resolving symlinks and ``..`` (``Path.resolve(strict=False)``), and
containment is decided by path components, never by string prefix, so ``/home/me/proj-evil`` is
not inside ``/home/me/proj``. Comparison is exact (case- and normalisation-sensitive): on a
case-insensitive file system a differently cased spelling of a root counts as *outside*, which
asks more, never less.

Protected ("sensitive") paths always ask before a write, in every mode and whatever allow rule
matches: ``.git/``, ``.claude/settings*.json``, ``.mcp.json``, ``~/.ssh/``, shell start-up files,
``.env*`` files, and editor workspace configuration that can run programs (``.vscode/``,
``.idea/``, ``.zed/``, ``.devcontainer/``, ``*.code-workspace``, Neovim's and Vim's ``.nvim.lua``,
``.nvimrc``, ``.exrc``). Their names are compared after Unicode NFKC normalisation and case folding,
so look-alikes (``.GIT``, full-width dots) are protected too (more asking, never less).
Secret files (``.env*``, ``~/.ssh``, ``~/.aws``, ...) also ask before they are *read*.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePath

SHELL_RC_FILES = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".cshrc",
        ".tcshrc",
        ".kshrc",
        ".inputrc",
        ".envrc",
        "config.fish",
    }
)
"""File names of shell start-up files: writing one runs code in every later shell."""

PROTECTED_DIRS = frozenset({".git", ".ssh", ".gnupg", ".aws", ".kube", ".docker"})
"""Directory names whose contents are protected wherever they appear."""

EDITOR_CONFIG_DIRS = frozenset({".vscode", ".idea", ".zed", ".devcontainer"})
"""Editor and dev-container workspace folders: their files define tasks, launch
configurations, terminal profiles, interpreter paths and container commands that the editor
runs (VS Code ``tasks.json``/``settings.json``, JetBrains run configurations, Zed tasks,
``devcontainer.json`` ``postCreateCommand``)."""

EDITOR_CONFIG_FILES = frozenset({".nvim.lua", ".nvimrc", ".exrc"})
"""Project-local Vim and Neovim start-up files (run by ``'exrc'``)."""

EDITOR_CONFIG_SUFFIXES = (".code-workspace",)
"""VS Code multi-root workspace files (they hold settings, tasks and launch configurations)."""

SECRET_DIRS_IN_HOME = (".ssh", ".aws", ".gnupg", ".kube", ".docker", ".config/gcloud")
"""Directories under the home directory whose files are secrets (reads ask too)."""

_SECRET_DIR_PARTS = tuple((folder, tuple(folder.split("/"))) for folder in SECRET_DIRS_IN_HOME)

SECRET_FILE_NAMES = frozenset({".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials"})
"""File names that usually hold credentials (reads ask too)."""

ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
"""``.env`` variants that are templates without secrets (reads are not asked about)."""


class UnsafeWriteError(Exception):
    """A write must not happen: the path moved (a symlink appeared, ``..``), or left the roots.

    Raised by :func:`check_write_path` right before a file is written.
    """


def fold(name: str) -> str:
    """``name`` normalised for protection checks: NFKC, then case-folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def resolve(path: Path, *, cwd: Path | None = None) -> Path:
    """``path`` made absolute (against ``cwd``) with ``~``, symlinks and ``..`` resolved.

    Never raises for missing files: the longest existing prefix is resolved and the rest is
    normalised lexically (``Path.resolve(strict=False)``). A symlink loop resolves as far as
    Python can and then stays as spelled.
    """
    p = path.expanduser()
    if not p.is_absolute():
        p = (cwd or Path.cwd()) / p
    try:
        return p.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.normpath(p))


def is_within(path: Path, roots: Sequence[Path]) -> bool:
    """Whether ``path`` lies inside one of ``roots`` (or is one), by path components, after
    resolving symlinks and ``..`` of ``path``. ``roots`` should be resolved already."""
    resolved = resolve(path)
    return any(_contains(root, resolved) for root in roots)


def _contains(root: PurePath, path: PurePath) -> bool:
    root_parts, parts = root.parts, path.parts
    return len(parts) >= len(root_parts) and parts[: len(root_parts)] == root_parts


def is_sensitive(path: Path, *, home: Path, exempt: Sequence[Path] = ()) -> str | None:
    """Why a write to ``path`` (resolved, absolute) must always ask, or ``None``.

    ``exempt`` folders are never sensitive (the project's auto-memory folder, the only
    exception to the ``~/.claude`` rule).

    Checks the resolved path's components with :func:`fold`: any ``.git``/``.ssh``/... directory,
    ``.claude/settings*.json`` files (and anything else under ``.claude/`` that configures
    hooks), ``.mcp.json``, shell start-up files, ``.env*`` files and editor configuration
    (:data:`EDITOR_CONFIG_DIRS`, :data:`EDITOR_CONFIG_FILES`, :data:`EDITOR_CONFIG_SUFFIXES`).
    """
    if any(_contains(folder, path) for folder in exempt):
        return None
    parts = [fold(p) for p in path.parts]
    for index, part in enumerate(parts[:-1]):
        if part in PROTECTED_DIRS:
            return f"it is inside a protected {path.parts[index]} directory"
    name = parts[-1] if parts else ""
    if name in PROTECTED_DIRS:
        return f"{path.name} is a protected directory"
    editor = _editor_config(path, parts)
    if editor:
        return editor
    if (
        len(parts) >= 2
        and parts[-2] == ".claude"
        and (name.startswith("settings") or name in {"hooks", "commands", "agents"})
    ):
        return "it configures the agent (.claude settings)"
    if (
        len(parts) >= 3
        and ".claude" in parts[:-1]
        and parts[parts.index(".claude") + 1]
        in {
            "hooks",
            "commands",
            "agents",
        }
    ):
        return "it configures the agent (.claude hooks, commands or agents)"
    if name == ".mcp.json":
        return "it configures MCP servers (.mcp.json)"
    if name in SHELL_RC_FILES:
        return f"{path.name} is a shell start-up file"
    if name == ".env" or name.startswith(".env."):
        return f"{path.name} may hold secrets (.env file)"
    if name in {".gitconfig", ".gitmodules", ".gitattributes"}:
        return f"{path.name} configures git (it can make git run commands)"
    if _contains(home / ".config" / "git", path) or _contains(home / ".claude", path):
        return "it configures git or the agent for the whole user account"
    return None


def _editor_config(path: Path, parts: Sequence[str]) -> str | None:
    """Why ``path`` (its folded ``parts``) is editor configuration that can run programs."""
    for index, part in enumerate(parts):
        if part in EDITOR_CONFIG_DIRS:
            where = path.parts[index]
            if index == len(parts) - 1:
                return f"{where} holds editor configuration that can run programs"
            return f"it is inside {where}, editor configuration that can run programs"
    name = parts[-1] if parts else ""
    if name in EDITOR_CONFIG_FILES:
        return f"{path.name} is an editor start-up file (it runs code when the editor opens)"
    if name.endswith(EDITOR_CONFIG_SUFFIXES):
        return f"{path.name} is an editor workspace file (it can define tasks that run programs)"
    return None


def is_secret(path: Path, *, home: Path) -> str | None:
    """Why *reading* ``path`` (resolved, absolute) must ask, or ``None``: ``.env`` files
    (not templates), credential files and the home directory's credential folders."""
    name = fold(path.name)
    if (name == ".env" or name.startswith(".env.")) and name not in ENV_TEMPLATES:
        return f"{path.name} may hold secrets (.env file)"
    if name in SECRET_FILE_NAMES:
        return f"{path.name} usually holds credentials"
    if (
        name.startswith("id_")
        and not name.endswith(".pub")
        and ".ssh" in {fold(p) for p in path.parts}
    ):
        return f"{path.name} is a private key"
    # Compared by components, as _contains(home / folder, path) would, without building a
    # path per folder on every read the permission engine decides.
    parts, base = path.parts, home.parts
    if parts[: len(base)] == base:
        rest = parts[len(base) :]
        for folder, sub in _SECRET_DIR_PARTS:
            if rest[: len(sub)] == sub:
                return f"it is inside ~/{folder}, which holds credentials"
    return None


def check_write_path(
    path: Path, *, roots: Sequence[Path] | None = None, approved: Iterable[Path] = ()
) -> None:
    """Re-validate ``path`` right before it is written (time-of-check/time-of-use).

    ``path`` is the resolved absolute path the permission engine judged. Raises
    :class:`UnsafeWriteError` when it is relative, when it no longer resolves to itself (a
    component became a symlink, or it names a symlink), or, when ``roots`` is given, when it is
    outside every root and not in ``approved`` (paths outside the roots the user allowed).
    Call it in the change-set pipeline immediately before the temp-file-and-rename.
    """
    if not path.is_absolute():
        raise UnsafeWriteError(f"refusing to write {path}: not an absolute path")
    if path.is_symlink():
        raise UnsafeWriteError(f"refusing to write {path}: it is now a symbolic link")
    now = resolve(path)
    if now != path:
        raise UnsafeWriteError(
            f"refusing to write {path}: it now resolves to {now} (a directory on the way was "
            "replaced by a symbolic link since the write was approved)"
        )
    outside = roots is not None and not any(_contains(r, path) for r in roots)
    if outside and path not in {resolve(a) for a in approved}:
        assert roots is not None
        raise UnsafeWriteError(
            f"refusing to write {path}: it is outside the workspace roots "
            f"({', '.join(str(r) for r in roots)})"
        )
