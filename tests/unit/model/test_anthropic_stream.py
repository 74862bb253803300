"""AnthropicModel streaming through the real SDK against the scripted server."""

from __future__ import annotations

import json

from lsp_agent.model.anthropic import INVALID_JSON_KEY
from lsp_agent.model.types import (
    Message,
    ResponseDone,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolInputDelta,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseStart,
)
from lsp_agent.testing.scenario import (
    ScriptedRaw,
    ScriptedUsage,
    reply,
    scenario,
    text,
    thinking,
    tool_use,
)

from .conftest import MakeModel, StartServer, collect, simple_request


async def test_text_deltas_arrive_in_order_then_one_response_done(
    serve: StartServer, make_model: MakeModel
) -> None:
    words = "The quick brown fox jumps over the lazy dog."
    server = await serve(scenario(reply(words, chunk_chars=4)))
    events = await collect(make_model(server.base_url), simple_request())

    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == -(-len(words) // 4)  # ceil: one delta per 4 characters
    assert "".join(d.text for d in deltas) == words
    assert {d.index for d in deltas} == {0}
    assert isinstance(events[-1], ResponseDone)
    assert sum(isinstance(e, ResponseDone) for e in events) == 1
    response = events[-1].response
    assert response.content == (TextBlock(text=words),)
    assert response.stop_reason == "end_turn"
    assert response.model == "claude-test"
    server.assert_done()


async def test_several_tool_uses_reassemble_from_json_pieces(
    serve: StartServer, make_model: MakeModel
) -> None:
    read_input = {"file_path": "/src/pkg/a.py", "offset": 10, "limit": 20}
    bash_input = {"command": "python -m pytest -q tests/test_a.py", "timeout": 60000}
    server = await serve(
        scenario(
            reply(
                "Looking at two things.",
                tool_use("Read", read_input, id="toolu_read"),
                tool_use("Bash", bash_input),
                chunk_chars=3,
            )
        )
    )
    events = await collect(make_model(server.base_url), simple_request())

    starts = [e for e in events if isinstance(e, ToolUseStart)]
    assert [(s.index, s.id, s.name) for s in starts] == [
        (1, "toolu_read", "Read"),
        (2, "toolu_scripted_0_2", "Bash"),
    ]
    for start, expected in zip(starts, (read_input, bash_input), strict=True):
        pieces = [e for e in events if isinstance(e, ToolInputDelta) and e.index == start.index]
        assert len(pieces) > 1
        assert json.loads("".join(p.partial_json for p in pieces)) == expected
        # Every input delta of a block comes after its start event.
        assert events.index(start) < events.index(pieces[0])
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.content[1:] == (
        ToolUseBlock(id="toolu_read", name="Read", input=read_input),
        ToolUseBlock(id="toolu_scripted_0_2", name="Bash", input=bash_input),
    )
    assert done.response.stop_reason == "tool_use"


async def test_thinking_streams_with_its_signature(
    serve: StartServer, make_model: MakeModel
) -> None:
    thought = "The user wants a greeting; keep it short."
    server = await serve(
        scenario(reply(thinking(thought, signature="sig-abc=="), text("Hi!"), chunk_chars=7))
    )
    events = await collect(make_model(server.base_url), simple_request(thinking_budget=2048))

    pieces = [e for e in events if isinstance(e, ThinkingDelta)]
    assert "".join(p.thinking for p in pieces) == thought
    assert {p.index for p in pieces} == {0}
    # Thinking deltas all come before the text of the next block.
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert events.index(pieces[-1]) < first_text
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.content == (
        ThinkingBlock(thinking=thought, signature="sig-abc=="),
        TextBlock(text="Hi!"),
    )
    assert server.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}


async def test_usage_and_stop_reason_map_from_the_stream(
    serve: StartServer, make_model: MakeModel
) -> None:
    usage = ScriptedUsage(
        input_tokens=11,
        output_tokens=222,
        cache_creation_input_tokens=3333,
        cache_read_input_tokens=44444,
    )
    server = await serve(
        scenario(
            reply("cut sh", stop_reason="max_tokens", usage=usage),
            reply("window", stop_reason="model_context_window_exceeded"),
        )
    )
    model = make_model(server.base_url)

    first = (await collect(model, simple_request()))[-1]
    assert isinstance(first, ResponseDone)
    assert first.response.stop_reason == "max_tokens"
    assert first.response.usage.model_dump() == usage.model_dump()
    assert first.response.usage.context_tokens == 11 + 3333 + 44444

    second = (await collect(model, simple_request()))[-1]
    assert isinstance(second, ResponseDone)
    # Passed through, so the loop can tell a full context window from a long answer.
    assert second.response.stop_reason == "model_context_window_exceeded"
    server.assert_done()


async def test_invalid_tool_json_becomes_a_marked_input(
    serve: StartServer, make_model: MakeModel
) -> None:
    broken = '{"command": "ls -la'
    server = await serve(
        scenario(
            reply(
                tool_use("Bash", id="toolu_bad", input_json=broken),
                tool_use("Bash", id="toolu_list", input_json="[1, 2]"),
                tool_use("Read", {"file_path": "/ok"}, id="toolu_ok"),
            )
        )
    )
    done = (await collect(make_model(server.base_url), simple_request()))[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.content == (
        ToolUseBlock(id="toolu_bad", name="Bash", input={INVALID_JSON_KEY: broken}),
        ToolUseBlock(id="toolu_list", name="Bash", input={INVALID_JSON_KEY: "[1, 2]"}),
        ToolUseBlock(id="toolu_ok", name="Read", input={"file_path": "/ok"}),
    )


async def test_unknown_blocks_are_skipped_and_indexes_stay_dense(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(
        scenario(
            reply(
                ScriptedRaw(content_block={"type": "redacted_thinking", "data": "opaque"}),
                "after",
                ScriptedRaw(
                    content_block={
                        "type": "server_tool_use",
                        "id": "srvtoolu_1",
                        "name": "web_search",
                        "input": {"query": "x"},
                    }
                ),
                tool_use("Read", {"file_path": "/a"}, id="toolu_a"),
            )
        )
    )
    events = await collect(make_model(server.base_url), simple_request())
    assert [e.index for e in events if isinstance(e, TextDelta)] == [0]
    assert [e.index for e in events if isinstance(e, ToolUseStart)] == [1]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.content == (
        TextBlock(text="after"),
        ToolUseBlock(id="toolu_a", name="Read", input={"file_path": "/a"}),
    )


async def test_request_goes_out_with_cache_breakpoints_and_blocks_converted(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(scenario(reply("ok")))
    history = (
        Message.user_text("fix the test"),
        Message(
            role="assistant",
            content=(
                ThinkingBlock(thinking="plan", signature="sig1"),
                TextBlock(text=""),
                ToolUseBlock(id="toolu_1", name="Bash", input={"command": "pytest"}),
            ),
        ),
        Message(
            role="user",
            content=(
                ToolResultBlock(tool_use_id="toolu_1", content="1 FAILED", is_error=True),
                TextBlock(text="also look at b.py"),
            ),
        ),
    )
    request = simple_request(
        system=("static part", "dynamic part"), messages=history, max_tokens=4000
    )
    await collect(make_model(server.base_url), request)

    (body,) = server.requests
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 4000
    assert body["stream"] is True
    # Breakpoints after the static and the dynamic part of the system prompt.
    assert body["system"] == [
        {"type": "text", "text": "static part", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "dynamic part", "cache_control": {"type": "ephemeral"}},
    ]
    assert [t["name"] for t in body["tools"]] == ["Read", "Bash"]
    assert body["tools"][0]["input_schema"]["required"] == ["file_path"]
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "plan", "signature": "sig1"},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest"}},
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1 FAILED", "is_error": True},
        {"type": "text", "text": "also look at b.py", "cache_control": {"type": "ephemeral"}},
    ]
    # Message-level breakpoints: the first block of the first message (the conversation's start
    # block) and the last message; no sampling parameters.
    assert body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in json.dumps(body["messages"][0]["content"][1:])
    assert "cache_control" not in json.dumps(body["messages"][1])
    assert not {"temperature", "top_p", "top_k", "thinking"} & body.keys()


async def test_cache_breakpoint_skips_a_trailing_thinking_block(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(scenario(reply("continued")))
    history = (
        Message.user_text("go"),
        Message(
            role="assistant",
            content=(TextBlock(text="partial"), ThinkingBlock(thinking="t", signature="s")),
        ),
    )
    await collect(make_model(server.base_url), simple_request(messages=history))
    last = server.requests[0]["messages"][-1]["content"]
    assert last[0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in last[1]


async def test_a_growing_history_moves_the_breakpoint_and_keeps_surrogates_replaced(
    serve: StartServer, make_model: MakeModel
) -> None:
    # The model converts each message once and reuses it: the breakpoint of the first request
    # must not stay on its last message, and replacements must hold in later requests.
    server = await serve(scenario(reply("one"), reply("two")))
    model = make_model(server.base_url)
    first = (Message.user_text("bad \ud800 text"),)
    await collect(model, simple_request(messages=first))
    second = (
        *first,
        Message(role="assistant", content=(TextBlock(text="one"),)),
        Message.user_text("next"),
    )
    await collect(model, simple_request(messages=second))
    body0, body1 = (request["messages"] for request in server.requests)
    assert body0 == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "bad \ufffd text", "cache_control": {"type": "ephemeral"}}
            ],
        }
    ]
    # The first block of the first message keeps a breakpoint (the conversation's start).
    assert body1[0] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "bad \ufffd text", "cache_control": {"type": "ephemeral"}}
        ],
    }
    assert body1[2]["content"] == [
        {"type": "text", "text": "next", "cache_control": {"type": "ephemeral"}}
    ]
    assert "cache_control" not in json.dumps(body1[1])


async def test_fields_of_the_wrong_type_count_as_absent(
    serve: StartServer, make_model: MakeModel
) -> None:
    # A faulty endpoint: a text block whose text is a number, a tool_use whose name is one and
    # whose input is not an object. The answer keeps its shape; nothing crashes.
    server = await serve(
        scenario(
            reply(
                ScriptedRaw(content_block={"type": "text", "text": 5}),
                ScriptedRaw(
                    content_block={"type": "tool_use", "id": "toolu_x", "name": 7, "input": "no"}
                ),
                "fine",
            )
        )
    )
    events = await collect(make_model(server.base_url), simple_request())
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.content == (
        TextBlock(text=""),
        ToolUseBlock(id="toolu_x", name="", input={}),
        TextBlock(text="fine"),
    )
    assert [e.name for e in events if isinstance(e, ToolUseStart)] == [""]
