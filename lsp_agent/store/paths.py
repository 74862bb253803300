"""Where transcripts live: ``<data>/projects/<project key>/<session id>.jsonl``.

``<data>`` is the user data folder (platformdirs ``user_data_path("lsp-agent")``,
``~/.local/share/lsp-agent`` on Linux), overridden by the ``LSP_AGENT_DATA_DIR`` environment
variable or the ``sessions.dataDir`` setting. The project key is Claude Code's: the absolute
working directory with every character that is not a letter or digit replaced by ``-``
(``/home/me/app`` → ``-home-me-app``), shortened with a hash when it would pass
:data:`MAX_KEY` characters.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

DATA_DIR_ENV = "LSP_AGENT_DATA_DIR"
"""Environment variable that overrides the data folder (tests point it at a temporary one)."""

MAX_KEY = 180
"""Longest project key (characters); longer ones keep a prefix and a hash (file-name limits)."""

SUFFIX = ".jsonl"

_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")
_SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def data_dir(override: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """The data folder: ``override`` (a setting), else ``$LSP_AGENT_DATA_DIR``, else the
    platform's user data folder. Absolute; not created here."""
    if override is not None:
        return override.expanduser().resolve()
    env = os.environ if environ is None else environ
    value = env.get(DATA_DIR_ENV, "").strip()
    if value:
        return Path(value).expanduser().resolve()
    import platformdirs

    return platformdirs.user_data_path("lsp-agent").resolve()


def project_key(cwd: Path) -> str:
    """The folder name of a project's transcripts (see the module doc)."""
    key = _NON_ALNUM.sub("-", str(cwd))
    if len(key) <= MAX_KEY:
        return key
    digest = hashlib.sha256(str(cwd).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{key[: MAX_KEY - 17]}-{digest}"


def projects_dir(data: Path) -> Path:
    """The folder holding one folder per project."""
    return data / "projects"


def transcript_path(data: Path, cwd: Path, session_id: str) -> Path:
    """The transcript of session ``session_id`` started in ``cwd``. Raises ``ValueError`` for
    an id that is not a plain file name (letters, digits, ``-``, ``_``)."""
    if not valid_session_id(session_id):
        raise ValueError(f"not a valid session id: {session_id!r}")
    return projects_dir(data) / project_key(cwd) / f"{session_id}{SUFFIX}"


def valid_session_id(session_id: str) -> bool:
    """Whether ``session_id`` may name a transcript file (1-128 of ``[A-Za-z0-9_-]``)."""
    return bool(_SESSION_ID.match(session_id))


def find_transcript(data: Path, session_id: str, cwd: Path | None = None) -> Path | None:
    """The transcript of ``session_id``: in ``cwd``'s project folder first, else in any
    project (Claude Code's ``--resume`` searches other projects too). ``None``: not found."""
    if not valid_session_id(session_id):
        return None
    if cwd is not None:
        path = transcript_path(data, cwd, session_id)
        if path.is_file():
            return path
    root = projects_dir(data)
    if not root.is_dir():
        return None
    for path in root.glob(f"*/{session_id}{SUFFIX}"):
        if path.is_file():
            return path
    return None
