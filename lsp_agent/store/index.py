"""The session list: a summary of every transcript, kept in ``<data>/index.json`` so listing
does not read every transcript each time.

The index is a cache, never the truth: each listing scans the transcript files, and an entry
is used only while its file's size and modification time are what the entry recorded; a
missing, stale or unreadable index is rebuilt from the transcripts. Updates take an exclusive
lock (``<data>/index.lock``), so servers sharing a data folder never write it at the same
time, and replace the file atomically.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lsp_agent.store.history import active_chain, interrupted, load_transcript, prompt_text
from lsp_agent.store.paths import SUFFIX, projects_dir
from lsp_agent.store.records import Record

log = logging.getLogger(__name__)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

INDEX_FILE = "index.json"
INDEX_VERSION = 1
TITLE_CHARS = 80
"""Longest title taken from the first prompt (characters)."""

DEFAULT_RETENTION_DAYS = 30
"""Transcripts untouched for longer are deleted at startup (Claude Code's
``cleanupPeriodDays`` default)."""


@dataclass(frozen=True, kw_only=True)
class SessionInfo:
    """One persisted session: ``created``/``updated`` are ISO 8601 UTC; ``turns`` counts the
    user's prompts; ``size`` (bytes) and ``mtime_ns`` identify the file version summarised."""

    session_id: str
    path: str
    cwd: str
    title: str
    created: str
    updated: str
    turns: int
    model: str
    mode: str
    interrupted: bool
    size: int
    mtime_ns: int


def summarize(path: Path, records: Sequence[Record], *, size: int, mtime_ns: int) -> SessionInfo:
    """The list entry of a transcript's ``records``."""
    chain = active_chain(records)
    meta = next((r for r in records if r.type == "meta"), None)
    title = ""
    turns = 0
    mode = str(meta.get("mode", "default")) if meta is not None else "default"
    model = str(meta.get("model", "")) if meta is not None else ""
    for record in chain:
        text = prompt_text(record)
        if text is not None:
            turns += 1
            if not title:
                title = _title(text)
        elif record.type == "mode" and isinstance(record.get("mode"), str):
            mode = record.get("mode")
        elif record.type == "model" and isinstance(record.get("model"), str):
            model = record.get("model")
    written = written_title(records)
    if written is not None:
        title = _title(written)
    first = records[0] if records else None
    last = records[-1] if records else None
    return SessionInfo(
        session_id=(meta.session_id if meta is not None else "") or path.stem,
        path=str(path),
        cwd=str(meta.get("cwd", "")) if meta is not None else "",
        title=title or "(no prompt)",
        created=first.timestamp if first is not None else "",
        updated=last.timestamp if last is not None else "",
        turns=turns,
        model=model,
        mode=mode,
        interrupted=interrupted(chain),
        size=size,
        mtime_ns=mtime_ns,
    )


def written_title(records: Sequence[Record]) -> str | None:
    """The title the model wrote for the session: the newest ``title`` record anywhere in the
    file (they are side records, off the chain); ``None`` when there is none."""
    for record in reversed(records):
        value = record.get("title") if record.type == "title" else None
        if isinstance(value, str) and value.strip():
            return value
    return None


def _title(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


def list_sessions(data: Path, *, cwd: Path | None = None) -> list[SessionInfo]:
    """Every persisted session (of ``cwd``'s project only, when given), newest first.
    Transcripts that cannot be read are left out (logged); the index is refreshed."""
    files = _transcripts(data)
    with _locked(data):
        cached = _read_index(data)
        fresh: dict[str, dict[str, Any]] = {}
        infos: list[SessionInfo] = []
        for path, stat in files:
            key = str(path)
            entry = cached.get(key)
            if (
                entry is not None
                and entry.get("size") == stat.st_size
                and entry.get("mtime_ns") == stat.st_mtime_ns
            ):
                try:
                    info = SessionInfo(**entry)
                except TypeError:
                    info = None
            else:
                info = None
            if info is None:
                try:
                    loaded = load_transcript(path)
                except OSError as exc:
                    log.warning("cannot read transcript %s: %s", path, exc)
                    continue
                if not loaded.records:
                    continue
                info = summarize(path, loaded.records, size=stat.st_size, mtime_ns=stat.st_mtime_ns)
            fresh[key] = asdict(info)
            infos.append(info)
        if fresh != cached:
            _write_index(data, fresh)
    if cwd is not None:
        wanted = str(cwd)
        infos = [i for i in infos if i.cwd == wanted]
    infos.sort(key=lambda i: i.updated, reverse=True)
    return infos


def remove_expired(data: Path, *, days: float, now: float | None = None) -> list[Path]:
    """Delete transcripts (and their session folders) not modified for ``days`` days;
    ``days <= 0`` keeps everything. Returns the deleted transcripts."""
    if days <= 0:
        return []
    limit = (time.time() if now is None else now) - days * 86400
    removed: list[Path] = []
    for path, stat in _transcripts(data):
        if stat.st_mtime >= limit:
            continue
        try:
            path.unlink()
        except OSError as exc:
            log.warning("cannot delete expired transcript %s: %s", path, exc)
            continue
        removed.append(path)
    return removed


def _transcripts(data: Path) -> list[tuple[Path, os.stat_result]]:
    root = projects_dir(data)
    found: list[tuple[Path, os.stat_result]] = []
    if not root.is_dir():
        return found
    for path in root.glob(f"*/*{SUFFIX}"):
        try:
            found.append((path, path.stat()))
        except OSError:
            continue
    return found


def _read_index(data: Path) -> dict[str, dict[str, Any]]:
    try:
        raw = json.loads((data / INDEX_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(raw, dict) or raw.get("version") != INDEX_VERSION:
        return {}
    sessions = raw.get("sessions")
    if not isinstance(sessions, dict):
        return {}
    return {k: v for k, v in sessions.items() if isinstance(v, dict)}


def _write_index(data: Path, sessions: dict[str, dict[str, Any]]) -> None:
    text = json.dumps({"version": INDEX_VERSION, "sessions": sessions}, ensure_ascii=False)
    try:
        data.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=data, prefix=".index-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(tmp, data / INDEX_FILE)
    except OSError as exc:
        log.warning("cannot write the session index in %s: %s", data, exc)
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(tmp)


@contextlib.contextmanager
def _locked(data: Path) -> Iterator[None]:
    """Hold ``<data>/index.lock`` exclusively (no lock when the folder is not writable: the
    index is then not written either)."""
    try:
        data.mkdir(parents=True, exist_ok=True)
        file = (data / "index.lock").open("a")
    except OSError:
        yield
        return
    try:
        if fcntl is not None:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        file.close()
