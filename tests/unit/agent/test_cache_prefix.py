"""Prompt-cache discipline in real sessions: the requests the scripted Messages-API server
receives (through the real SDK) are compared byte for byte.

The invariant: each request repeats every block the previous one sent (tools, the system
prompt, the messages up to its last cache breakpoint), so the cache written by one request is
read by the next; only a clearing of old tool results or a compaction rewrites the
conversation, and even then the system prompt, the tools and the memory start block stay.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsp_agent.config.store import SettingsStore
from lsp_agent.context.clearing import STUB_PREFIX
from lsp_agent.context.compaction import SUMMARY_HEADER
from lsp_agent.context.memory.changes import CHANGED_HEADER
from lsp_agent.context.start import START_OPEN
from lsp_agent.protocol.documents import TextSnapshot
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.testing.scenario import ScriptedUsage, expecting, reply, scenario, tool_use

from .conftest import HarnessFactory

WINDOW = 20_000
MAX_TOKENS = 2000
ROUNDS = 30
SMALL = ScriptedUsage(input_tokens=1000, output_tokens=20)


def flat(request: dict[str, Any]) -> list[str]:
    """The request as the sequence of blocks the cache prefix is made of (tools, system,
    then each message block with its role), without the ``cache_control`` markers, which
    move from one request to the next and are not part of the cached content."""

    def plain(block: dict[str, Any]) -> str:
        return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)

    out = [json.dumps(t, sort_keys=True) for t in request.get("tools", [])]
    out += ["system:" + plain(b) for b in request.get("system", [])]
    for index, message in enumerate(request["messages"]):
        for block in message["content"]:
            out.append(f"{index}:{message['role']}:{plain(block)}")
    return out


def breakpoints(request: dict[str, Any]) -> list[int]:
    """Positions in :func:`flat` of the blocks that carry ``cache_control``."""
    blocks = [*request.get("tools", []), *request.get("system", [])]
    blocks += [b for m in request["messages"] for b in m["content"]]
    return [i for i, b in enumerate(blocks) if "cache_control" in b]


def cached_prefix(request: dict[str, Any]) -> list[str]:
    """What ``request`` wrote to the cache: every block up to its last breakpoint."""
    return flat(request)[: breakpoints(request)[-1] + 1]


def trusted(tmp_path: Path) -> Any:
    return lambda cwd: SettingsStore(
        cwd=cwd, home=tmp_path / "home", managed_path=tmp_path / "none.json", trusted=True
    )


def opening(request: dict[str, Any]) -> dict[str, Any]:
    block: dict[str, Any] = request["messages"][0]["content"][0]
    return block


async def ask(h: Any, text: str) -> Any:
    result = await h.session.prompt([PromptText(text=text)])
    assert result.error is None, result.error
    return result


async def test_consecutive_requests_share_every_byte_up_to_the_last_breakpoint(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    (tmp_path / "CLAUDE.md").write_text("Use tabs.\n")
    h = await harness(
        scenario(
            reply(tool_use("Echo", {"text": "one"}), usage=SMALL),
            reply("First done.", usage=SMALL),
            reply(tool_use("Echo", {"text": "two"}), tool_use("Echo", {"text": "2b"}), usage=SMALL),
            reply("Second done.", usage=SMALL),
            reply("Third done.", usage=SMALL),
            # /compact: the summary request extends the cached prefix too.
            reply("Goal: test. Pending: none.", expect=expecting(last_user_contains="CONTEXT")),
            reply(tool_use("Echo", {"text": "four"}), usage=SMALL),
            reply("Fourth done.", usage=SMALL),
        ),
        settings=trusted(tmp_path),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    await ask(h, "first")
    await ask(h, "second")
    await ask(h, "third")
    await ask(h, "/compact")
    await ask(h, "fourth")
    h.server.assert_done()
    requests = h.server.requests
    assert len(requests) == 8
    for request in requests:
        marks = breakpoints(request)
        assert len(marks) <= 4  # the API's limit
        # The static system part, the environment, the memory start block, the last block.
        assert len(marks) == 4
        assert "Use tabs." not in json.dumps(request["system"])
        assert opening(request)["text"].startswith(START_OPEN)
        assert "Use tabs." in opening(request)["text"]
        assert opening(request)["cache_control"] == {"type": "ephemeral"}
    compacted_at = 6  # the first request after the compaction
    for index in range(1, len(requests)):
        before, after = requests[index - 1], requests[index]
        if index == compacted_at:
            # The conversation was rewritten; the system prompt and tools were not.
            assert SUMMARY_HEADER in json.dumps(after["messages"][0])
            assert after["system"] == before["system"] and after["tools"] == before["tools"]
            assert cached_prefix(before) != flat(after)[: len(cached_prefix(before))]
            continue
        prefix = cached_prefix(before)
        assert flat(after)[: len(prefix)] == prefix, f"request {index} rewrote the prefix"
        assert len(flat(after)) > len(prefix)


async def test_a_clearing_keeps_the_system_prompt_and_the_start_block(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    (tmp_path / "CLAUDE.md").write_text("Use tabs.\n")
    big = "x" * 2_000  # about 500 tokens in the call and 500 in its result
    # threshold = 20,000 - 2,000 - 5% of 20,000 = 17,000 tokens: passed after ~16 calls;
    # then every result but the newest 20% of the window goes in one batch.
    steps = [reply(tool_use("Echo", {"text": f"{n}{big}"})) for n in range(ROUNDS)]
    h = await harness(
        scenario(*steps, reply("Done.")),
        settings=trusted(tmp_path),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    await h.session.prompt([PromptText(text="read a lot")])
    h.server.assert_done()

    def stubs(request: dict[str, Any]) -> int:
        return json.dumps(request["messages"]).count(STUB_PREFIX)

    def is_summary(request: dict[str, Any]) -> bool:
        return "CONTEXT CHECKPOINT" in json.dumps(request["messages"][-1])

    requests = h.server.requests
    assert any(stubs(r) for r in requests), "the scenario did not clear"
    previous = requests[0]
    checked = clearings = 0
    for request in requests[1:]:
        prefix = cached_prefix(previous)
        if stubs(request) > stubs(previous):
            # Cleared in one batch: tools, system and the start block are still shared.
            clearings += 1
            shared = len(request["tools"]) + len(request["system"]) + 1
            assert flat(request)[:shared] == flat(previous)[:shared]
            assert flat(request)[: len(prefix)] != prefix
        else:
            checked += 1
            assert flat(request)[: len(prefix)] == prefix, "a request rewrote the prefix"
        if not is_summary(request):  # a summary request is a side branch of the prefix
            previous = request
    assert checked >= 3 and clearings >= 1


async def test_a_memory_edit_mid_session_is_a_reminder_and_the_prefix_stays(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    memory = tmp_path / "CLAUDE.md"
    memory.write_text("Use tabs.\n")
    h = await harness(
        scenario(
            reply("One.", usage=SMALL),
            reply("Two.", expect=expecting(last_user_contains="Use spaces."), usage=SMALL),
            reply("Three.", usage=SMALL),
            reply("Four.", expect=expecting(last_user_contains="Use both."), usage=SMALL),
            reply("Five.", expect=expecting(last_user_contains="fifth"), usage=SMALL),
        ),
        settings=trusted(tmp_path),
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
    )
    await ask(h, "first")
    memory.write_text("Use spaces.\n")
    await ask(h, "second")
    await ask(h, "third")  # nothing changed: no reminder
    # An unsaved edit in the editor counts as the file's text (the door's Host.buffer).
    unsaved = TextSnapshot(path=memory, text="Use both.\n", version=3, source="buffer")
    h.host.buffer = lambda path: unsaved if path == memory else None  # type: ignore[method-assign]
    await ask(h, "fourth")
    await ask(h, "/clear")
    await ask(h, "fifth")
    h.server.assert_done()
    r = h.server.requests
    for index in (1, 2, 3):
        prefix = cached_prefix(r[index - 1])
        assert flat(r[index])[: len(prefix)] == prefix
        # The start block still shows the text the conversation started with.
        assert "Use tabs." in opening(r[index])["text"]
    last_user = [json.dumps(m) for m in (r[i]["messages"][-1] for i in range(5))]
    assert CHANGED_HEADER in last_user[1] and "Use spaces." in last_user[1]
    assert CHANGED_HEADER not in last_user[2]
    assert CHANGED_HEADER in last_user[3] and "Use both." in last_user[3]
    # /clear: the conversation starts again with the memory as it is now, no reminder.
    assert "Use both." in opening(r[4])["text"] and CHANGED_HEADER not in last_user[4]
