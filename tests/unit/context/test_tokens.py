"""Token accounting: chars/4 estimates, calibration by usage, next-request prediction."""

from __future__ import annotations

from lsp_agent.context.tokens import (
    Calibration,
    EstimateCache,
    Observed,
    estimate_message,
    estimate_messages,
    estimate_request,
    estimate_text,
    estimate_tools,
    next_request_tokens,
)
from lsp_agent.model.limits import DEFAULT_LIMITS, limits_for
from lsp_agent.model.types import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)


def test_estimate_text_is_chars_over_four_rounded_up() -> None:
    assert estimate_text("") == 0
    assert estimate_text("abcd") == 1
    assert estimate_text("abcde") == 2
    assert estimate_text("x" * 4000) == 1000


def test_message_estimate_counts_every_block_kind() -> None:
    small = estimate_message(Message.user_text("hi"))
    use = Message(
        role="assistant",
        content=(ToolUseBlock(id="t1", name="Bash", input={"command": "x" * 400}),),
    )
    result = Message(role="user", content=(ToolResultBlock(tool_use_id="t1", content="y" * 4000),))
    assert estimate_message(use) > 100
    assert estimate_message(result) > 1000 > small


def test_calibration_moves_toward_observed_ratio_within_bounds() -> None:
    cal = Calibration()
    assert cal.apply(100) == 100
    cal = cal.observe(estimated=100, actual=200)
    assert 1.0 < cal.ratio <= 2.0
    assert cal.apply(100) > 100
    for _ in range(20):
        cal = cal.observe(estimated=100, actual=100_000)  # absurd: clamped
    assert cal.ratio <= 3.0
    assert cal.observe(estimated=0, actual=10) == cal


def test_next_request_uses_observed_exact_size_plus_appended_estimate() -> None:
    history = (
        Message.user_text("a" * 400),
        Message(role="assistant", content=(TextBlock(text="b" * 40),)),
        Message.user_text("c" * 4000),
    )
    observed = Observed.from_usage(
        messages=1, usage=Usage(input_tokens=5000, cache_read_input_tokens=1000, output_tokens=20)
    )
    got = next_request_tokens(
        system=("s",), tools=(), messages=history, observed=observed, calibration=Calibration()
    )
    assert got == 6020 + estimate_message(history[2])


def test_next_request_falls_back_to_full_estimate_after_a_rewrite() -> None:
    history = (Message.user_text("a" * 400),)
    observed = Observed(messages=10, tokens=99_999)  # the history got shorter: compacted
    got = next_request_tokens(
        system=("s" * 40,), tools=(), messages=history, observed=observed, calibration=Calibration()
    )
    assert got < 1000


def test_model_table_exact_prefix_default_and_1m() -> None:
    assert limits_for("scripted-20k").context_window == 20_000
    assert limits_for("claude-sonnet-4-5-20250929").context_window == 200_000
    assert limits_for("claude-sonnet-4-5-20250929").max_output_tokens == 64_000
    assert limits_for("some-other-model") == DEFAULT_LIMITS
    assert limits_for("claude-opus-4-8[1m]").context_window == 1_000_000


def _history(turns: int) -> list[Message]:
    out: list[Message] = [Message.user_text("start")]
    for i in range(turns):
        out.append(
            Message(
                role="assistant",
                content=(ToolUseBlock(id=f"t{i}", name="Read", input={"file_path": f"/f{i}"}),),
            )
        )
        out.append(
            Message(role="user", content=(ToolResultBlock(tool_use_id=f"t{i}", content="z" * i),))
        )
    return out


def test_estimate_cache_gives_the_uncached_estimate_as_the_history_grows_and_is_rewritten() -> None:
    cache = EstimateCache()
    tools = (ToolSpec(name="Read", description="Reads.", input_schema={"type": "object"}),)
    history = _history(3)
    for messages in (history, [*history, *_history(2)[1:]], history[:2], history):
        plain = estimate_request(system=("sys",), tools=tools, messages=messages)
        cached = estimate_request(system=("sys",), tools=tools, messages=messages, cache=cache)
        assert cached == plain
    # A rewritten message (same position, new object, other content) is estimated afresh.
    cleared = [*history[:-1], Message.user_text("x" * 4000)]
    assert estimate_request(
        system=(), tools=tools, messages=cleared, cache=cache
    ) == estimate_request(system=(), tools=tools, messages=cleared)
    other = (ToolSpec(name="Bash", description="Runs." * 100, input_schema={"type": "object"}),)
    assert estimate_request(system=(), tools=other, messages=(), cache=cache) == estimate_tools(
        other
    )


def test_estimate_cache_holds_only_the_last_requests_objects() -> None:
    cache = EstimateCache()
    cache.messages(_history(5))
    short = _history(1)
    assert cache.messages(short) == estimate_messages(short)
    assert len(cache._messages) == len(short)


def test_estimate_cache_follows_a_growing_history_and_its_rewrites() -> None:
    cache = EstimateCache()
    history: list[Message] = []
    for step in range(20):
        history.append(Message.user_text(f"prompt {step} " + "y" * step * 50))
        assert cache.messages(history) == estimate_messages(history)
        assert len(cache._messages) == len(history)
    # An equal message as a new object, then one whose content changed (a cleared result).
    same = [*history[:5], history[5].model_copy(), *history[6:]]
    assert cache.messages(same) == estimate_messages(same)
    changed = [*history[:5], Message.user_text("cleared"), *history[6:]]
    assert cache.messages(changed) == estimate_messages(changed)
    assert cache.messages([*changed, history[0]]) == estimate_messages([*changed, history[0]])
    assert cache.messages(history[:3]) == estimate_messages(history[:3])
    assert len(cache._messages) == 3
