"""Where a summary prepared ahead of time can be used: the tail after its starting point."""

from __future__ import annotations

from lsp_agent.context.early import tail_after
from lsp_agent.model.types import Message, ToolResultBlock

from .test_clearing import session


def test_tail_is_what_came_after_the_covered_prefix() -> None:
    history = session(4)
    covered = history[:3]  # prompt, call, result
    assert tail_after(covered, history) == history[3:]
    assert tail_after(history, history) == ()


def test_cleared_results_still_match() -> None:
    history = session(4)
    covered = history[:5]
    stub = ToolResultBlock(tool_use_id="t0", content="[cleared]")
    cleared = (history[0], history[1], Message(role="user", content=(stub,)), *history[3:])
    assert tail_after(covered, cleared) == history[5:]


def test_a_rewritten_history_or_a_tail_starting_with_the_user_does_not_match() -> None:
    history = session(4)
    assert tail_after(history[:3], (Message.user_text("other"), *history[1:])) is None
    assert tail_after(history[:2], history) is None  # the tail would start with tool results
    assert tail_after(history, history[:3]) is None  # shorter than what it covers
