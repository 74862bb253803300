"""The session list's index: a cache of the transcripts, never trusted alone; retention."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from lsp_agent.model.types import Message
from lsp_agent.store.history import load_transcript
from lsp_agent.store.index import INDEX_FILE, list_sessions, remove_expired
from lsp_agent.store.paths import transcript_path
from lsp_agent.store.transcript import Transcript


def make(data: Path, cwd: Path, session_id: str, prompts: list[str]) -> Path:
    path = transcript_path(data, cwd, session_id)
    existing = load_transcript(path).records if path.exists() else ()
    t = Transcript(path=path, session_id=session_id, leaf=existing[-1].uuid if existing else None)
    if not existing:
        t.append("meta", cwd=str(cwd), model="m", mode="default")
    for p in prompts:
        t.append(
            "user", message=Message.user_text(p).model_dump(mode="json"), prompt=True, promptText=p
        )
        t.append(
            "assistant",
            message=Message(role="assistant", content=Message.user_text("ok").content).model_dump(
                mode="json"
            ),
        )
        t.append("turn_end", stopReason="end_turn")
    t.close()
    return path


def test_the_index_is_rebuilt_when_missing_stale_or_broken(tmp_path: Path) -> None:
    data = tmp_path / "data"
    a = make(data, Path("/proj/a"), "s1", ["fix the bug in parser.py", "thanks"])
    make(data, Path("/proj/b"), "s2", ["hello"])
    first = {i.session_id: (i.title, i.turns, i.cwd) for i in list_sessions(data)}
    assert first == {
        "s1": ("fix the bug in parser.py", 2, "/proj/a"),
        "s2": ("hello", 1, "/proj/b"),
    }
    index = json.loads((data / INDEX_FILE).read_text())
    assert set(index["sessions"]) == {str(a), str(transcript_path(data, Path("/proj/b"), "s2"))}
    # A lying index (titles changed behind the file's back) is not believed once the file moved on.
    entry = index["sessions"][str(a)]
    entry["title"] = "stale title"
    (data / INDEX_FILE).write_text(json.dumps(index))
    assert [i.title for i in list_sessions(data, cwd=Path("/proj/a"))] == ["stale title"]
    make(data, Path("/proj/a"), "s1", ["one more"])  # appends: size and mtime change
    assert [(i.title, i.turns) for i in list_sessions(data, cwd=Path("/proj/a"))] == [
        ("fix the bug in parser.py", 3)
    ]
    (data / INDEX_FILE).write_text("{ not json")
    assert len(list_sessions(data)) == 2
    a.unlink()
    assert [i.session_id for i in list_sessions(data)] == ["s2"]
    assert str(a) not in json.loads((data / INDEX_FILE).read_text())["sessions"]


def test_retention_deletes_only_old_transcripts(tmp_path: Path) -> None:
    data = tmp_path / "data"
    old = make(data, Path("/p"), "old", ["x"])
    new = make(data, Path("/p"), "new", ["y"])
    month_ago = time.time() - 31 * 86400
    os.utime(old, (month_ago, month_ago))
    assert remove_expired(data, days=0) == []
    assert remove_expired(data, days=30) == [old]
    assert not old.exists() and new.exists()
    assert [i.session_id for i in list_sessions(data)] == ["new"]
