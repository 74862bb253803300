"""The recorder given a history that lost its last message (a prompt dropped after the
endpoint refused the request, with the prompt already recorded): the transcript's branch goes
back to the message before it, as for any other rewrite."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.context.compaction import Boundary
from lsp_agent.model.types import Message, TextBlock
from lsp_agent.sessions.recording import Recorder
from lsp_agent.store.history import active_chain, history_of, load_transcript
from lsp_agent.store.transcript import Transcript

NO_BOUNDARIES: tuple[Boundary, ...] = ()


def said(role: str, text: str) -> Message:
    return Message(role=role, content=(TextBlock(text=text),))  # type: ignore[arg-type]


def test_a_history_one_message_shorter_branches_back(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    recorder = Recorder(transcript=Transcript(path=path, session_id="s"), meta={"cwd": "/p"})
    first = [said("user", "one"), said("assistant", "One.")]
    recorder.sync([*first, said("user", "too big")], boundaries=NO_BOUNDARIES, summary="")
    recorder.sync(first, boundaries=NO_BOUNDARIES, summary="")
    assert recorder.recorded == first
    recorder.sync([*first, said("user", "two")], boundaries=NO_BOUNDARIES, summary="")
    recorder.close()
    chain = active_chain(load_transcript(path).records)
    assert [m.text() for m in history_of(chain)[0]] == ["one", "One.", "two"]


def test_equal_copies_of_the_recorded_messages_record_only_what_is_new(tmp_path: Path) -> None:
    # The usual commit hands the recorded message objects back (checked by identity); a
    # history of equal copies (a restored one) and one with a changed message take the
    # message-by-message comparison.
    path = tmp_path / "s.jsonl"
    recorder = Recorder(transcript=Transcript(path=path, session_id="s"), meta={"cwd": "/p"})
    first = [said("user", "one"), said("assistant", "One.")]
    recorder.sync(first, boundaries=NO_BOUNDARIES, summary="")
    recorder.sync([*first, said("user", "two")], boundaries=NO_BOUNDARIES, summary="")
    copies = [said("user", "one"), said("assistant", "One."), said("user", "two")]
    recorder.sync([*copies, said("assistant", "Two.")], boundaries=NO_BOUNDARIES, summary="")
    recorder.sync([*first, said("user", "other")], boundaries=NO_BOUNDARIES, summary="")
    recorder.close()
    records = load_transcript(path).records
    assert sum(r.type in ("user", "assistant") for r in records) == 5
    chain = active_chain(records)
    assert [m.text() for m in history_of(chain)[0]] == ["one", "One.", "other"]
