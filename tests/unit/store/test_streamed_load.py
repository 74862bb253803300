"""Loading a saved session while it is replayed (``resume(..., stream=True)``, what
``lspAgent/session/load`` does): the first update leaves before the history is built, and the
result is the same as reading the whole transcript first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsp_agent.model.types import Message, TextBlock, ToolResultBlock, ToolUseBlock
from lsp_agent.sessions.replay import replay
from lsp_agent.sessions.resume import resume
from lsp_agent.store.history import active_chain, history_of, load_transcript
from lsp_agent.store.lazy import scan_transcript
from lsp_agent.store.paths import data_dir, transcript_path
from lsp_agent.store.transcript import Transcript
from lsp_agent.testing.scenario import scenario
from tests.unit.store.test_resume import Make, managers  # noqa: F401 (fixture)


def _msg(role: str, *blocks: Any) -> dict[str, Any]:
    return Message(role=role, content=blocks).model_dump(mode="json")  # type: ignore[arg-type]


def _text(role: str, text: str) -> dict[str, Any]:
    return _msg(role, TextBlock(text=text))


def _turn(t: Transcript, i: int) -> None:
    t.append("user", message=_text("user", f"q{i}"), prompt=True, promptText=f"q{i}")
    use = ToolUseBlock(id=f"toolu_{i}", name="Echo", input={"text": f"t{i}"})
    t.append("assistant", message=_msg("assistant", TextBlock(text=f"look {i}"), use))
    t.append("user", message=_msg("user", ToolResultBlock(tool_use_id=use.id, content=f"r{i}")))
    t.append("assistant", message=_text("assistant", f"a{i}"))
    t.append("turn_end", stopReason="end_turn")


def _saved(manager: Any, cwd: Path, session_id: str) -> Path:
    """A transcript with every kind of history a load must get right: tool calls, a mode
    change, a compaction, a /clear, a rewind branch, a line written by another program,
    a garbage line and a torn last line."""
    path = transcript_path(data_dir(manager.config.data_dir), cwd, session_id)
    t = Transcript(path=path, session_id=session_id)
    t.append("meta", cwd=str(cwd), roots=[str(cwd)], model="claude-test", mode="default")
    for i in range(3):
        _turn(t, i)
    t.append("clear")
    for i in range(3, 6):
        _turn(t, i)
    t.append("mode", mode="acceptEdits")
    t.append(
        "compact_boundary",
        trigger="manual",
        tokensBefore=100,
        tokensAfter=10,
        promptsKept=1,
        files=0,
        summary="s",
    )
    t.append("user", message=_text("user", "<compact-summary>s</compact-summary>"))
    for i in range(6, 9):
        _turn(t, i)
    # Rewound to before q8: the next turn hangs from q7's end.
    q7_end = [r for r in load_transcript(path).records if r.type == "turn_end"][-2]
    t.append("rewind", parent=q7_end.uuid, data={"to": "q8"})
    for i in range(9, 40):
        _turn(t, i)
    t.close()
    lines = path.read_bytes().splitlines(keepends=True)
    # Another program's line: same record, keys in another order (no envelope prefix).
    record = json.loads(lines[-3])
    lines[-3] = (json.dumps(dict(reversed(list(record.items())))) + "\n").encode()
    lines.insert(12, b"\x00 not json at all\n")
    path.write_bytes(b"".join(lines) + b'{"type":"user","uuid":"torn","parentUuid":')
    return path


async def test_a_streamed_load_equals_reading_everything_first(
    managers: Make,  # noqa: F811
    tmp_path: Path,
) -> None:
    manager, _, _ = await managers(scenario())
    cwd = tmp_path / "project"
    cwd.mkdir()
    path = _saved(manager, cwd, "s1")
    loaded = load_transcript(path)
    chain = active_chain(loaded.records)
    expected_history, expected_ids = history_of(chain)

    resumed = resume(manager, "s1", stream=True)
    first = next(resumed.updates)
    assert resumed.session.history == ()  # nothing built before the first update
    updates = [first, *resumed.updates]
    session = resumed.session
    assert [u.to_wire() for u in updates] == [u.to_wire() for u in replay(chain, session.tools)]
    assert session.history == expected_history
    assert session.recorder is not None
    assert session.recorder.ids == list(expected_ids)
    assert session.context.prompts == [f"q{i}" for i in (6, 7, *range(9, 40))]
    assert session.mode == "acceptEdits"
    assert sorted(resumed.warnings) == sorted(loaded.warnings)
    assert any("torn last line" in w for w in resumed.warnings)
    assert any(":13: corrupt line" in w for w in resumed.warnings)
    assert not any("q8" in m.text() for m in session.history)
    # The session goes on from the branch's leaf.
    assert session.recorder.transcript.leaf == chain[-1].uuid
    await manager.close("s1")

    eager = resume(manager, "s1")  # without stream: complete on return
    assert eager.session.history == expected_history
    assert [u.to_wire() for u in eager.updates] == [u.to_wire() for u in updates]


async def test_a_load_closed_early_still_restores_the_whole_history(
    managers: Make,  # noqa: F811
    tmp_path: Path,
) -> None:
    manager, _, _ = await managers(scenario())
    cwd = tmp_path / "project"
    cwd.mkdir()
    path = _saved(manager, cwd, "s2")
    expected, _ = history_of(active_chain(load_transcript(path).records))
    resumed = resume(manager, "s2", stream=True)
    for _ in range(3):
        next(resumed.updates)
    resumed.updates.close()  # type: ignore[attr-defined]  # e.g. the client went away
    assert resumed.session.history == expected


def test_a_line_whose_envelope_survived_is_decoded_and_skipped_when_reached(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    t = Transcript(path=path, session_id="s")
    t.append("meta", cwd="/p")
    t.append("user", message=_text("user", "one"), prompt=True)
    t.append("assistant", message=_text("assistant", "A1"))
    t.append("turn_end", stopReason="end_turn")
    t.close()
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2][:200] + b"\xff broken\n"  # the answer: envelope intact, body not
    path.write_bytes(b"".join(lines))
    scanned = scan_transcript(path)
    assert [h.type for h in scanned.heads] == ["meta", "user", "assistant", "turn_end"]
    assert scanned.warnings == []
    assert scanned.record(2) is None
    assert any(":3: corrupt line" in w for w in scanned.warnings)
    assert scanned.record(1) is not None
