"""Clearing old tool results: only old ones, only in batches, stubs keep pairing."""

from __future__ import annotations

from lsp_agent.context.clearing import (
    STUB_PREFIX,
    FileState,
    ReadRecord,
    clear_results,
    plan_clearing,
)
from lsp_agent.context.compaction import pairing_problems
from lsp_agent.model.types import Message, TextBlock, ToolResultBlock, ToolUseBlock


def session(turns: int, *, result_chars: int = 4000, tool: str = "Bash") -> tuple[Message, ...]:
    """A history of ``turns`` tool exchanges, each with one large result."""
    out: list[Message] = [Message.user_text("please work")]
    for i in range(turns):
        inp = {"file_path": f"/p/f{i}.py"} if tool == "Read" else {"command": f"cmd {i}"}
        out.append(
            Message(
                role="assistant",
                content=(
                    TextBlock(text=f"step {i}"),
                    ToolUseBlock(id=f"t{i}", name=tool, input=inp),
                ),
            )
        )
        out.append(
            Message(
                role="user",
                content=(
                    ToolResultBlock(tool_use_id=f"t{i}", content=f"{i}:" + "r" * result_chars),
                ),
            )
        )
    return tuple(out)


def test_nothing_cleared_when_too_little_would_go() -> None:
    history = session(3, result_chars=400)
    assert plan_clearing(history, window=200_000).ids == ()


def test_old_results_cleared_newest_protected_and_pairing_kept() -> None:
    history = session(30)  # 30 results of ~1000 tokens in a 20k window
    plan = plan_clearing(history, window=20_000)
    assert plan.ids and plan.tokens >= 2000
    assert "t29" not in plan.ids and "t28" not in plan.ids  # newest exchanges
    assert plan.ids[0] == "t0"  # oldest first, contiguous
    numbers = [int(i[1:]) for i in plan.ids]
    assert numbers == list(range(len(numbers)))
    cleared = clear_results(history, plan.ids)
    assert pairing_problems(cleared) == []
    assert len(cleared) == len(history)
    stubs = [
        b
        for m in cleared
        for b in m.content
        if isinstance(b, ToolResultBlock) and b.content.startswith(STUB_PREFIX)
    ]
    assert len(stubs) == len(plan.ids)
    assert "cmd 0" in stubs[0].content
    # The untouched prefix keeps the very same objects (byte-stable cache prefix).
    assert cleared[0] is history[0] and cleared[1] is history[1]
    # Stubs are never cleared again: a second plan only takes what is new.
    again = plan_clearing(cleared, window=20_000)
    assert not set(again.ids) & set(plan.ids)


def test_read_stub_reports_versions_when_file_changed() -> None:
    history = session(30, tool="Read")
    plan = plan_clearing(history, window=20_000)
    reads = {
        f"t{i}": ReadRecord(path=f"/p/f{i}.py", seen=FileState(version=12, digest="old"))
        for i in range(30)
    }

    def now(path: str) -> FileState | None:
        if path == "/p/f0.py":
            return FileState(version=15, digest="new")
        if path == "/p/f1.py":
            return FileState(version=12, digest="old")
        return None

    cleared = clear_results(history, plan.ids, reads=reads, file_state=now)
    texts = {
        b.tool_use_id: b.content
        for m in cleared
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }
    assert "file changed since: v12 → v15; Read again for the live text" in texts["t0"]
    assert "unchanged since (v12)" in texts["t1"]
    assert "gone or unreadable" in texts["t2"]
