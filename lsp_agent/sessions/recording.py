"""Recording a session into its transcript, from the session's own events: each new history
the loop commits, mode changes, the end of each turn.

The recorder compares the history it is given with the one it recorded: new messages are
appended; a history that restarts with a compaction summary is recorded as the context
engine's boundary followed by the new history; an empty one is ``/clear``; a prompt merged into
an interrupted turn's last message is recorded as what was added. Old tool results cleared to
save context count as unchanged (the transcript keeps the full results). The first record of
a session (``meta``) is written with its first message, so a session nobody prompted leaves no
file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lsp_agent.context.compaction import Boundary, is_compacted_start
from lsp_agent.model.types import Message, ToolResultBlock, Usage
from lsp_agent.store.transcript import Transcript

PERSISTENCE_OFF = (
    "Session persistence is off: {reason}. This conversation goes on in memory but will not "
    "survive a restart."
)


@dataclass(kw_only=True)
class Recorder:
    """Writes one session's records. ``meta`` holds the fields of its ``meta`` record
    (written before the first message unless ``started``)."""

    transcript: Transcript
    meta: dict[str, Any] = field(default_factory=dict)
    started: bool = False
    recorded: list[Message] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    """The record uuid of each message in :attr:`recorded` (the wire's ``messageId``)."""
    base: str | None = None
    """The record the recorded history hangs from (meta, a boundary or ``/clear``)."""
    boundaries: int = 0
    """Compaction boundaries of the session already recorded."""
    prompt_parents: dict[str, str | None] = field(default_factory=dict)
    """The parent of each prompt's record, by the prompt's uuid: where a rewind of the
    conversation to before that prompt branches from."""
    told: bool = False
    _prompt: str | None = None
    _prompt_id: str | None = None

    def begin_turn(self, text: str, message_id: str | None = None) -> None:
        """A prompt starts: the next user message recorded is marked as the user's prompt,
        with ``text`` (what the user typed) for the session list and the replay, and gets
        ``message_id`` as its record's uuid when given (the id the prompt was announced with)."""
        self._prompt = text
        self._prompt_id = message_id

    def sync(
        self, history: Sequence[Message], *, boundaries: Sequence[Boundary], summary: str
    ) -> None:
        """Record how ``history`` differs from the recorded one; ``boundaries`` and ``summary``
        are the context engine's compactions so far and its last summary."""
        old = self.recorded
        common = 0
        limit = min(len(history), len(old))
        if limit == len(old) and tuple(history[:limit]) == tuple(old):
            # The usual commit: the recorded messages themselves, then new ones. Compared in C
            # as tuples (each element found by identity first), where the loop below costs a
            # Python call per message of a long history; an equal message is one _same takes.
            common = limit
        while common < limit and _same(history[common], old[common]):
            common += 1
        if common == len(old):
            self._append(history[common:])
            return
        if len(boundaries) > self.boundaries and history and is_compacted_start(history[0]):
            self.boundaries = len(boundaries)
            self._restart(_boundary_fields(boundaries[-1], summary))
            self._append(history)
            return
        if not history:
            self._restart({"kind": "clear"})
            return
        if common == len(old) - 1 < len(history) and _extends(history[common], old[common]):
            added = history[common].content[len(old[common].content) :]
            self._append([Message(role=history[common].role, content=added)], merge=True)
            self.recorded[common] = history[common]
            self._append(history[common + 1 :])
            return
        # Any other rewrite: branch from the last message both share.
        self.transcript.leaf = self.ids[common - 1] if common else self.base
        del self.recorded[common:], self.ids[common:]
        self._append(history[common:])

    def mode(self, mode: str) -> None:
        """The permission mode changed."""
        if self.started:
            self.transcript.append("mode", mode=mode)
        else:
            self.meta["mode"] = mode

    def title(self, title: str) -> None:
        """The model wrote the session's title. The record hangs off the current leaf but
        does not become it: the conversation's chain (and a rewind's branch) is unaffected,
        and the session list takes the newest title record wherever it is."""
        self._start()
        leaf = self.transcript.leaf
        self.transcript.append("title", title=title)
        self.transcript.leaf = leaf

    def checkpoint(self, data: dict[str, Any]) -> None:
        """A prompt's checkpoint is complete (its turn ended): record what it holds."""
        if self.started:
            self.transcript.append("checkpoint", data=data)

    def rewind(self, data: dict[str, Any], *, prompt: str | None = None) -> None:
        """Record a rewind, durably. With ``prompt`` (the uuid of a recorded prompt whose
        conversation was cut), the record hangs from the record before that prompt, so the
        prompt and everything after it leave the active branch, and the recorded history is
        cut there too; without it the record continues the branch."""
        if not self.started:
            return
        parent: str | None = None
        if prompt is not None and prompt in self.ids:
            keep = self.ids.index(prompt)
            parent = self.prompt_parents.get(prompt) or (self.ids[keep - 1] if keep else self.base)
            del self.recorded[keep:], self.ids[keep:]
        self.transcript.append("rewind", parent=parent, data=data)
        self.transcript.sync()

    def end_turn(self, stop_reason: str, usage: Usage | None = None) -> None:
        """A prompt ended (also when cancelled): mark it with the tokens its model requests
        used (the Messages API's ``usage`` shape; kept so ``/cost`` survives a resume) and
        make the records durable."""
        self._prompt = None
        if self.started:
            if usage is None:
                self.transcript.append("turn_end", stopReason=stop_reason)
            else:
                self.transcript.append("turn_end", stopReason=stop_reason, usage=usage.model_dump())
            self.transcript.sync()

    def notice(self) -> str | None:
        """Once, when persistence went off: the text telling the user."""
        if self.told or self.transcript.error is None:
            return None
        self.told = True
        return PERSISTENCE_OFF.format(reason=self.transcript.error)

    def close(self) -> None:
        """Release the transcript (sync, unlock)."""
        self.transcript.close()

    def _start(self) -> None:
        if not self.started:
            self.started = True
            self.base = self.transcript.append("meta", **self.meta).uuid

    def _restart(self, fields: dict[str, Any]) -> None:
        self._start()
        kind = fields.pop("kind")
        self.base = self.transcript.append(kind, **fields).uuid
        self.recorded.clear()
        self.ids.clear()

    def _append(self, messages: Sequence[Message], *, merge: bool = False) -> None:
        for message in messages:
            self._start()
            extra: dict[str, Any] = {}
            record_id: str | None = None
            if message.role == "user" and self._prompt is not None and not _only_results(message):
                extra = {"prompt": True, "promptText": self._prompt}
                record_id, self._prompt, self._prompt_id = self._prompt_id, None, None
            record = self.transcript.append(
                message.role, record_id=record_id, message=message.model_dump(mode="json"), **extra
            )
            if "prompt" in extra:
                self.prompt_parents[record.uuid] = record.parent_uuid
            if merge:
                self.ids[-1] = record.uuid
            else:
                self.recorded.append(message)
                self.ids.append(record.uuid)


def _boundary_fields(boundary: Boundary, summary: str) -> dict[str, Any]:
    return {
        "kind": "compact_boundary",
        "trigger": boundary.trigger,
        "tokensBefore": boundary.tokens_before,
        "tokensAfter": boundary.tokens_after,
        "promptsKept": boundary.prompts_kept,
        "files": boundary.files,
        "summary": summary,
    }


def _same(new: Message, old: Message) -> bool:
    """The same message, or the same with some tool results cleared to save context."""
    if new is old or new == old:
        return True
    if new.role != old.role or len(new.content) != len(old.content):
        return False
    for a, b in zip(new.content, old.content, strict=True):
        if a == b:
            continue
        if (
            isinstance(a, ToolResultBlock)
            and isinstance(b, ToolResultBlock)
            and a.tool_use_id == b.tool_use_id
        ):
            continue
        return False
    return True


def _extends(new: Message, old: Message) -> bool:
    """``new`` is ``old`` with blocks added at the end (a prompt merged into an interrupted
    turn's last user message)."""
    n = len(old.content)
    return new.role == old.role and len(new.content) > n and new.content[:n] == old.content


def _only_results(message: Message) -> bool:
    return all(isinstance(b, ToolResultBlock) for b in message.content)
