"""The transcript file itself: records, the chain, torn and corrupt lines, newer versions,
locks, and a folder that cannot be written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lsp_agent.model.types import Message, TextBlock, ToolResultBlock, ToolUseBlock
from lsp_agent.store.history import (
    INTERRUPTED_RESULT,
    active_chain,
    history_of,
    interrupted,
    load_transcript,
)
from lsp_agent.store.paths import data_dir, find_transcript, project_key, transcript_path
from lsp_agent.store.records import FORMAT_VERSION, decode, encode, new_record
from lsp_agent.store.transcript import Transcript, TranscriptBusyError


def msg(role: str, text: str) -> dict[str, object]:
    return Message(role=role, content=(TextBlock(text=text),)).model_dump(mode="json")  # type: ignore[arg-type]


def write_session(path: Path, turns: int = 3) -> Transcript:
    t = Transcript(path=path, session_id="s1")
    t.append("meta", cwd="/p", model="m", mode="default")
    for i in range(turns):
        t.append(
            "user", message=msg("user", f"question {i}"), prompt=True, promptText=f"question {i}"
        )
        t.append("assistant", message=msg("assistant", f"answer {i}"))
        t.append("turn_end", stopReason="end_turn")
    t.close()
    return t


def texts(path: Path) -> list[str]:
    history, _ = history_of(active_chain(load_transcript(path).records))
    return [m.text() for m in history]


def test_records_round_trip_and_keep_fields_they_do_not_know(tmp_path: Path) -> None:
    record = new_record("user", session_id="s", parent=None, fields={"message": msg("user", "hé")})
    line = encode(record).decode()
    assert line.endswith("\n") and "hé" in line
    back = decode(line)
    assert back == record
    newer = json.loads(line) | {"futureField": [1, 2], "version": FORMAT_VERSION + 1}
    again = decode(json.dumps(newer))
    assert again.get("futureField") == [1, 2]
    assert json.loads(encode(again))["futureField"] == [1, 2]


def test_a_lone_surrogate_is_written_as_an_escape_not_lost(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    t = Transcript(path=path, session_id="s")
    t.append("assistant", message=msg("assistant", "bad \ud800 char"))
    t.close()
    assert t.error is None
    record = load_transcript(path).records[0]
    assert record.get("message")["content"][0]["text"] == "bad \ud800 char"


def test_a_record_line_has_the_bytes_of_the_standard_librarys_compact_json() -> None:
    message = Message(
        role="user",
        content=(
            ToolResultBlock(tool_use_id="t1", content="1\tf():\n2\t  'é\u2028\x1f\\\"/'"),
            TextBlock(text="ünïcödé 漢字 \x7f"),
        ),
    )
    record = new_record(
        "user",
        session_id="s",
        parent=None,
        fields={"message": message.model_dump(mode="json"), "n": [1, 2.5, 1e16, None, True]},
    )
    expected = json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"
    assert encode(record) == expected.encode()
    assert decode(encode(record)).get("message") == message.model_dump(mode="json")


def test_every_record_is_flushed_as_it_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    t = Transcript(path=path, session_id="s")
    t.append("meta", cwd="/p")
    t.append("user", message=msg("user", "hi"), prompt=True)
    # Another reader sees both lines before any sync or close.
    assert len(path.read_text().splitlines()) == 2
    t.close()


def test_a_torn_last_line_is_skipped_with_a_warning_and_the_rest_loads(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path)
    with path.open("ab") as f:
        f.write(b'{"type":"user","uuid":"x","parentUuid":')
    loaded = load_transcript(path)
    assert any("torn last line" in w and ":11:" in w for w in loaded.warnings)
    assert texts(path) == [f"{kind} {i}" for i in range(3) for kind in ("question", "answer")]


def test_a_corrupt_line_in_the_middle_keeps_history_before_and_after(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[4] = b"\x00\xff garbage that is not json\n"  # the second question's line
    path.write_bytes(b"".join(lines))
    loaded = load_transcript(path)
    assert [w for w in loaded.warnings if ":5: corrupt line" in w]
    # The lost record was a parent: the chain goes on with the line before it.
    # Only the corrupt line is lost; the two answers now in a row are merged.
    assert texts(path) == ["question 0", "answer 0answer 1", "question 2", "answer 2"]
    assert len(active_chain(loaded.records)) == len(loaded.records)


def test_a_newer_format_loads_what_is_understood_and_warns(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_session(path, turns=1)
    with path.open("a") as f:
        leaf = load_transcript(path).records[-1].uuid
        future = new_record("hologram", session_id="s1", parent=leaf).to_json()
        future["version"] = FORMAT_VERSION + 5
        f.write(json.dumps(future) + "\n")
    loaded = load_transcript(path)
    assert any("newer lsp-agent" in w for w in loaded.warnings)
    assert any("hologram" in w for w in loaded.warnings)
    assert texts(path) == ["question 0", "answer 0"]


def test_a_rewind_record_starts_a_branch_and_the_abandoned_one_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    t = Transcript(path=path, session_id="s")
    t.append("meta", cwd="/p")
    first = t.append("user", message=msg("user", "one"), prompt=True)
    t.append("assistant", message=msg("assistant", "A1"))
    t.append("user", message=msg("user", "two"), prompt=True)
    t.append("assistant", message=msg("assistant", "A2"))
    answer = next(r for r in load_transcript(path).records if r.type == "assistant")
    t.append("rewind", parent=answer.uuid, data={"to": first.uuid})
    t.append("user", message=msg("user", "three"), prompt=True)
    t.close()
    assert texts(path) == ["one", "A1", "three"]


def test_an_unanswered_tool_call_gets_an_interrupted_result(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    t = Transcript(path=path, session_id="s")
    t.append("meta", cwd="/p")
    t.append("user", message=msg("user", "run it"), prompt=True)
    use = ToolUseBlock(id="toolu_1", name="Bash", input={"command": "sleep 100"})
    t.append("assistant", message=Message(role="assistant", content=(use,)).model_dump(mode="json"))
    t.close()
    chain = active_chain(load_transcript(path).records)
    history, ids = history_of(chain)
    assert interrupted(chain)
    assert len(history) == 3 and len(ids) == 3
    result = history[-1].content[0]
    assert isinstance(result, ToolResultBlock) and result.tool_use_id == "toolu_1"
    assert result.is_error and result.content == INTERRUPTED_RESULT


def test_a_result_whose_call_was_lost_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    t = Transcript(path=path, session_id="s")
    t.append("user", message=msg("user", "go"), prompt=True)
    t.append("assistant", message=msg("assistant", "ok"))
    orphan = ToolResultBlock(tool_use_id="toolu_gone", content="x")
    t.append(
        "user",
        message=Message(role="user", content=(orphan, TextBlock(text="next"))).model_dump(
            mode="json"
        ),
    )
    t.close()
    history, _ = history_of(active_chain(load_transcript(path).records))
    assert [m.text() for m in history] == ["go", "ok", "next"]
    assert not any(isinstance(b, ToolResultBlock) for m in history for b in m.content)


def test_a_second_writer_of_the_same_session_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    one = Transcript(path=path, session_id="s")
    one.append("meta", cwd="/p")
    two = Transcript(path=path, session_id="s")
    with pytest.raises(TranscriptBusyError, match="another lsp-agent process"):
        two.open()
    one.close()
    two.open()
    two.close()


def test_a_folder_that_cannot_be_written_turns_persistence_off_and_keeps_the_chain(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")
    if os.geteuid() != 0:
        readonly = tmp_path / "ro"
        readonly.mkdir()
        readonly.chmod(0o500)
    for folder in [blocker] + ([readonly] if os.geteuid() != 0 else []):
        t = Transcript(path=folder / "p" / "s.jsonl", session_id="s")
        first = t.append("meta", cwd="/p")
        second = t.append("user", message=msg("user", "hi"))
        assert not t.enabled and t.error is not None and "cannot write" in t.error
        assert second.parent_uuid == first.uuid and t.leaf == second.uuid
        assert t.count == 0


def test_a_full_disk_turns_persistence_off(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    t = Transcript(path=Path("/dev/full"), session_id="s")
    t.append("meta", cwd="/p")
    t.append("user", message=msg("user", "x" * 70_000))
    t.sync()
    assert t.error is not None and "No space left" in t.error


def test_paths_follow_claude_codes_project_key_and_search_other_projects(tmp_path: Path) -> None:
    assert project_key(Path("/home/me/my_app")) == "-home-me-my-app"
    assert len(project_key(Path("/" + "x" * 400))) <= 180
    path = transcript_path(tmp_path, Path("/elsewhere"), "abc")
    path.parent.mkdir(parents=True)
    path.write_text("")
    assert find_transcript(tmp_path, "abc", Path("/here")) == path
    assert find_transcript(tmp_path, "../etc", None) is None
    with pytest.raises(ValueError):
        transcript_path(tmp_path, Path("/p"), "a/b")
    assert data_dir(None, {"LSP_AGENT_DATA_DIR": str(tmp_path)}) == tmp_path.resolve()
