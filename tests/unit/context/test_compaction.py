"""Compaction planning: thresholds, policy, the summary request, the new history."""

from __future__ import annotations

from lsp_agent.context.compaction import (
    MID_TURN_NOTE,
    OMITTED_NOTE,
    SUMMARY_HEADER,
    CompactPolicy,
    auto_threshold,
    compacted_history,
    drop_oldest,
    is_compacted_start,
    kept_prompts,
    newest_fitting,
    pairing_problems,
    summary_instruction,
    summary_problem,
    with_instruction,
)
from lsp_agent.model.types import Message, TextBlock, ToolResultBlock, ToolUseBlock

from .test_clearing import session


def test_threshold_is_window_minus_output_minus_reserve() -> None:
    assert auto_threshold(window=200_000, max_tokens=16_384) == 200_000 - 16_384 - 10_000
    assert auto_threshold(window=20_000, max_tokens=4096) == 20_000 - 4096 - 1000


def test_pct_override_only_lowers() -> None:
    env = {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}
    assert auto_threshold(window=200_000, max_tokens=16_384, environ=env) == 100_000
    env = {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "100"}
    assert auto_threshold(window=200_000, max_tokens=16_384, environ=env) == 173_616
    env = {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "abc"}
    assert auto_threshold(window=200_000, max_tokens=16_384, environ=env) == 173_616


def test_policy_from_settings_and_env() -> None:
    assert CompactPolicy.from_env({}) == CompactPolicy(auto=True, manual=True)
    assert CompactPolicy.from_env({}, auto_setting=False).auto is False
    assert CompactPolicy.from_env({"DISABLE_AUTO_COMPACT": "1"}) == CompactPolicy(
        auto=False, manual=True
    )
    assert CompactPolicy.from_env({"DISABLE_COMPACT": "true"}) == CompactPolicy(
        auto=False, manual=False
    )


def test_summary_request_appends_instruction_keeping_prefix_and_alternation() -> None:
    history = session(3)
    out = with_instruction(history, summary_instruction("the API notes"))
    assert out[:-1] == history[:-1]
    assert out[-1].role == "user"
    assert out[-1].content[: len(history[-1].content)] == history[-1].content
    assert "Focus the summary on: the API notes" in out[-1].text()
    assert pairing_problems(out) == []
    ended = (*history, Message(role="assistant", content=(TextBlock(text="done"),)))
    out = with_instruction(ended, "summarise")
    assert out[:-1] == ended and out[-1].text() == "summarise"


def test_prompts_kept_verbatim_newest_first_when_over_budget() -> None:
    prompts = ["use tabs, never spaces", "x" * 4000, "and keep the API stable"]
    kept, omitted = kept_prompts(prompts, budget=100_000)
    assert kept == tuple(prompts) and omitted == 0
    kept, omitted = kept_prompts(prompts, budget=100)
    assert kept == ("and keep the API stable",) and omitted == 2
    kept, _ = kept_prompts(["y" * 10_000], budget=10)
    assert kept == ("y" * 10_000,)  # the newest always survives


def test_compacted_history_holds_summary_working_set_and_prompts_verbatim() -> None:
    prompts = ("Never touch the migrations folder.", "Now add the endpoint  \n with   spaces")
    out = compacted_history(
        summary="Goal: ...",
        working_set="<working-set>files</working-set>",
        prompts=prompts,
        omitted=1,
        mid_turn=True,
    )
    assert len(out) == 1 and is_compacted_start(out[0])
    text = out[0].text()
    assert text.startswith(SUMMARY_HEADER)
    for p in prompts:
        assert p in text
    assert "<working-set>files</working-set>" in text
    assert "1 older ones" in text
    assert text.endswith(MID_TURN_NOTE)
    assert not is_compacted_start(Message.user_text("hello"))


def test_summary_fails_closed_when_empty_or_not_smaller() -> None:
    assert summary_problem("   ", tokens_before=1000) is not None
    assert summary_problem("x" * 8000, tokens_before=1000) is not None
    assert summary_problem("fine", tokens_before=1000) is None


def test_pairing_problems_found() -> None:
    use = Message(role="assistant", content=(ToolUseBlock(id="a", name="Bash", input={}),))
    orphan = Message(role="user", content=(ToolResultBlock(tool_use_id="zz", content=""),))
    assert pairing_problems((Message.user_text("x"), use, orphan))
    twice = Message(
        role="user",
        content=(ToolResultBlock(tool_use_id="a", content=""),) * 2,
    )
    assert pairing_problems((Message.user_text("x"), use, twice))
    missing = Message.user_text("no results")
    assert pairing_problems((Message.user_text("x"), use, missing))


def test_drop_oldest_keeps_pairing() -> None:
    history = session(10)
    for count in range(1, len(history)):
        out = drop_oldest(history, count)
        assert pairing_problems(out) == [], count
        assert out[0].role == "user"
        assert out[-1] == history[-1]
        if out != history:
            assert out[0].text() == OMITTED_NOTE
            assert len(out) <= len(history) - count + 1


def test_newest_fitting_keeps_pairing_and_the_newest_part_under_both_limits() -> None:
    history = session(10)
    sizes = [len(m.model_dump_json()) for m in history]
    assert newest_fitting(history, max_bytes=10**9, max_tokens=10**9) == (history, 0)
    for budget in (sum(sizes) // 2, sum(sizes) // 4):
        out, dropped = newest_fitting(history, max_bytes=budget, max_tokens=10**9)
        assert pairing_problems(out) == [] and out[0].text() == OMITTED_NOTE
        assert out[-1] == history[-1] and dropped == len(history) - len(out) + 1
        assert sum(len(m.model_dump_json()) for m in out) <= budget
    by_tokens, dropped = newest_fitting(history, max_bytes=10**9, max_tokens=200)
    assert dropped > 0 and pairing_problems(by_tokens) == []
