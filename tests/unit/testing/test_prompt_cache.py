"""The simulated prompt cache follows the API's rule: entries at breakpoints, reads of the
longest written prefix ending at a breakpoint or up to 20 blocks before it."""

from __future__ import annotations

from typing import Any

from lsp_agent.testing.prompt_cache import LOOKBACK, PromptCache

CC = {"type": "ephemeral"}


def body(*texts: str, marks: tuple[int, ...] = (-1,)) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
    for index in marks:
        blocks[index] = {**blocks[index], "cache_control": CC}
    return {
        "model": "m",
        "system": [{"type": "text", "text": "S" * 400, "cache_control": CC}],
        "messages": [{"role": "user", "content": blocks}],
    }


def test_a_growing_prompt_reads_what_the_previous_request_wrote() -> None:
    cache = PromptCache()
    first = cache.account(body("a" * 400))
    assert first.cache_read_input_tokens == 0 and first.input_tokens == 0
    second = cache.account(body("a" * 400, "b" * 400))
    # Everything up to the previous request's last breakpoint is read; the new block written.
    assert second.cache_read_input_tokens == first.total
    assert second.cache_creation_input_tokens == second.total - first.total
    assert 0.6 < second.read_share < 0.7


SYSTEM_BYTES = len('system:{"text":"' + "S" * 400 + '","type":"text"}')


def block_bytes(text: str) -> int:
    return len('0:user:{"text":"' + text + '","type":"text"}')


def test_a_changed_block_reads_only_up_to_the_last_breakpoint_before_it() -> None:
    cache = PromptCache()
    cache.account(body("a" * 400, "b" * 400))
    changed = cache.account(body("A" * 400, "b" * 400))
    # Only the system prompt (its own breakpoint) is still a hit.
    assert changed.cache_read_input_tokens == SYSTEM_BYTES // 4


def test_reads_look_back_at_most_20_blocks_before_a_breakpoint() -> None:
    head = "x" * 40
    cache = PromptCache()
    cache.account(body(head))
    near = cache.account(body(head, *(["y" * 40] * LOOKBACK)))
    assert near.cache_read_input_tokens == (SYSTEM_BYTES + block_bytes(head)) // 4
    cache = PromptCache()
    cache.account(body(head))
    far = cache.account(body(head, *(["y" * 40] * (LOOKBACK + 1))))
    assert far.cache_read_input_tokens == SYSTEM_BYTES // 4  # the entry is out of reach
