"""Whether a new ``CLAUDE.local.md`` should be added to ``.gitignore``.

Claude Code keeps the project's ``CLAUDE.local.md`` (the user's own notes for the project) out
of version control: creating it adds it to ``.gitignore``. Here only the question is answered,
read-only, with libgit2's own ignore rules (every ``.gitignore`` level, ``.git/info/exclude``
and the user's ``core.excludesFile``); the note writes the entry.
"""

from __future__ import annotations

from pathlib import Path


def needs_ignore(path: Path) -> bool:
    """``True`` when ``path`` lies in a git work tree (not inside its ``.git``) and git does
    not ignore it yet. ``False`` outside a repository, in a bare one, or when the repository
    cannot be read (``pygit2.GitError``/``OSError`` swallowed: the note is kept either way)."""
    # Imported here: libgit2 is needed only when a note creates the file, never on the way to a
    # session's first model request.
    import pygit2

    try:
        found = pygit2.discover_repository(str(path.parent))
        if found is None:
            return False
        repo = pygit2.Repository(found)
        if repo.is_bare or repo.workdir is None:
            return False
        workdir = Path(repo.workdir).resolve()
        relative = path.resolve().relative_to(workdir)
        if relative.parts[:1] == (".git",):
            return False
        return not repo.path_is_ignored(relative.as_posix())
    except (pygit2.GitError, OSError, ValueError):
        return False
