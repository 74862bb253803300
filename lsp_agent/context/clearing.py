"""Clearing old tool results ("microcompact"): the cheap step before any summary.

Old tool output is the bulk of a long session and the model rarely needs it verbatim again.
:func:`plan_clearing` walks back from the newest message, protects the results of the newest
exchanges and the newest tool output up to :data:`PROTECT_FRACTION` of the window, and picks
every older result, but only when together they free at least :data:`MIN_FREE_FRACTION` of
the window: clearing rewrites the cached prompt prefix from the first cleared result on, so it
is done rarely and in batches. :func:`clear_results` replaces the picked results with one-line
stubs; the ``tool_use`` blocks stay, so every ``tool_use`` keeps exactly one ``tool_result``.

The editor's angle: the server knows document versions, so the stub of a ``Read`` says whether
the file changed since it was read ("file changed since: v12 → v15; Read again for the live
text") instead of leaving the model to trust a stale copy. All sizes are fractions of the
window, so tests with small windows behave like real sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from lsp_agent.context.tokens import estimate_block
from lsp_agent.model.types import ContentBlock, Message, ToolResultBlock, ToolUseBlock

PROTECT_FRACTION = 0.2
"""Newest tool output kept verbatim, as a fraction of the context window."""

MIN_FREE_FRACTION = 0.1
"""Clearing happens only when it frees at least this fraction of the window."""

PROTECTED_MESSAGES = 4
"""Tool results in the newest messages (two exchanges) are never cleared."""

STUB_PREFIX = "[Old tool result cleared"
"""Every stub starts with this; a stub is never cleared again."""


@dataclass(frozen=True, kw_only=True)
class FileState:
    """A file as the server knows it: editor ``version`` (``None`` when read from disk) and
    the SHA-256 ``digest`` of its text."""

    version: int | None
    digest: str


@dataclass(frozen=True, kw_only=True)
class ReadRecord:
    """What one ``Read`` call saw: the absolute ``path`` and the :class:`FileState` then."""

    path: str
    seen: FileState


@dataclass(frozen=True, kw_only=True)
class ClearingPlan:
    """The results to clear (by ``tool_use_id``) and the tokens that frees (estimate)."""

    ids: tuple[str, ...]
    tokens: int


def plan_clearing(
    messages: Sequence[Message],
    *,
    window: int,
    protect_fraction: float = PROTECT_FRACTION,
    min_free_fraction: float = MIN_FREE_FRACTION,
    protected_messages: int = PROTECTED_MESSAGES,
) -> ClearingPlan:
    """Which tool results to clear (see the module doc); an empty plan when clearing would
    free less than ``min_free_fraction * window`` tokens."""
    protect = int(window * protect_fraction)
    kept = 0
    ids: list[str] = []
    tokens = 0
    last = len(messages) - protected_messages
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role != "user":
            continue
        for block in reversed(message.content):
            if not isinstance(block, ToolResultBlock) or block.content.startswith(STUB_PREFIX):
                continue
            size = estimate_block(block)
            if index >= last or kept + size <= protect:
                kept += size
                continue
            kept = protect + 1  # everything older goes too, so the kept part stays contiguous
            ids.append(block.tool_use_id)
            tokens += size
    if tokens < window * min_free_fraction:
        return ClearingPlan(ids=(), tokens=0)
    return ClearingPlan(ids=tuple(reversed(ids)), tokens=tokens)


def tool_uses_by_id(messages: Sequence[Message]) -> dict[str, ToolUseBlock]:
    """Every ``tool_use`` of the history by its id."""
    return {u.id: u for m in messages if m.role == "assistant" for u in m.tool_uses()}


def stub_text(
    use: ToolUseBlock | None,
    result: ToolResultBlock,
    *,
    read: ReadRecord | None = None,
    now: FileState | None = None,
) -> str:
    """The one-line stand-in for a cleared result.

    For a ``Read`` with a :class:`ReadRecord` the stub says whether the file changed since it
    was read, with editor versions when both are known (``now`` is the file's current state;
    ``None`` when it is gone or unreadable).
    """
    tokens = estimate_block(result)
    if use is not None and use.name == "Read" and read is not None:
        path = read.path
        if now is None:
            state = "the file is gone or unreadable now"
        elif now.digest == read.seen.digest:
            state = "unchanged since" + (f" (v{now.version})" if now.version is not None else "")
        elif read.seen.version is not None and now.version is not None:
            state = f"file changed since: v{read.seen.version} → v{now.version}"
        else:
            state = "file changed since it was read"
        return (
            f"{STUB_PREFIX}: Read {path}, {tokens} tokens; {state}; Read again for the live text.]"
        )
    what = _describe_use(use)
    return f"{STUB_PREFIX}: {what}, {tokens} tokens. Run it again if you need the output.]"


def _describe_use(use: ToolUseBlock | None) -> str:
    if use is None:
        return "an earlier tool call"
    for key in ("file_path", "command", "pattern", "path", "url", "query"):
        value = use.input.get(key)
        if isinstance(value, str) and value:
            short = value if len(value) <= 80 else value[:77] + "..."
            return f"{use.name} {short!r}"
    return use.name


def clear_results(
    messages: Sequence[Message],
    ids: Sequence[str],
    *,
    reads: Mapping[str, ReadRecord] | None = None,
    file_state: Callable[[str], FileState | None] | None = None,
) -> tuple[Message, ...]:
    """``messages`` with the results named by ``ids`` replaced by stubs (:func:`stub_text`).

    ``reads`` maps a ``Read`` call's id to what it saw; ``file_state(path)`` gives a file's
    current state. Messages without a cleared result are returned as the same objects, so the
    unchanged prefix stays byte-identical.
    """
    wanted = set(ids)
    if not wanted:
        return tuple(messages)
    uses = tool_uses_by_id(messages)
    out: list[Message] = []
    for message in messages:
        if message.role != "user" or not any(
            isinstance(b, ToolResultBlock) and b.tool_use_id in wanted for b in message.content
        ):
            out.append(message)
            continue
        blocks: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock) and block.tool_use_id in wanted:
                record = (reads or {}).get(block.tool_use_id)
                now = file_state(record.path) if record is not None and file_state else None
                text = stub_text(uses.get(block.tool_use_id), block, read=record, now=now)
                blocks.append(block.model_copy(update={"content": text, "images": ()}))
            else:
                blocks.append(block)
        out.append(Message(role="user", content=tuple(blocks)))
    return tuple(out)
