"""The request body: encoded once, each message's text reused while the message is."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.model.anthropic_body import BodyEncoder
from lsp_agent.model.anthropic_request import (
    REQUEST_LIMIT_BYTES,
    FirstMarks,
    convert_messages,
    to_api_params,
)
from lsp_agent.model.base import ModelError
from lsp_agent.model.types import Message, ModelRequest, TextBlock
from lsp_agent.testing.scenario import reply, scenario

from .conftest import MakeModel, StartServer, collect, simple_request


def _params(*messages: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "claude-test",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "sys"}],
        "messages": list(messages),
        "stream": True,
    }


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def test_the_body_is_the_params_as_compact_json_with_text_as_is() -> None:
    params = _params(_user("héllo → wörld"), {"role": "assistant", "content": []})
    body = BodyEncoder().encode(params)
    assert json.loads(body) == params
    assert "héllo → wörld".encode() in body  # not \u-escaped, as the SDK sends it
    assert b", " not in body and b": " not in body


def test_a_message_already_sent_is_not_encoded_again() -> None:
    encoder = BodyEncoder()
    first = _user("one")
    encoder.encode(_params(first))
    # The converted messages are shared and never modified; changing one here shows whether
    # the next request encodes it again or reuses the text sent before.
    first["content"][0]["text"] = "changed"
    copy = json.loads(json.dumps(first))
    body = json.loads(encoder.encode(_params(first, copy)))
    assert [m["content"][0]["text"] for m in body["messages"]] == ["one", "changed"]


def test_a_background_request_keeps_the_texts_of_the_users_turn() -> None:
    encoder = BodyEncoder()
    first = _user("one")
    encoder.encode(_params(first))
    encoder.encode(_params(_user("summarise")), keep=False)
    first["content"][0]["text"] = "changed"
    assert json.loads(encoder.encode(_params(first)))["messages"][0]["content"][0]["text"] == "one"


def test_lone_surrogates_outside_the_messages_become_replacement_characters() -> None:
    params = _params(_user("ok"))
    params["system"] = [{"type": "text", "text": "bad \ud800 part"}]
    body = json.loads(BodyEncoder().encode(params))
    assert body["system"][0]["text"] == "bad \ufffd part"


@pytest.mark.parametrize("params", [{}, {"messages": []}, {"model": "m"}])
def test_edge_shapes_stay_valid_json(params: dict[str, Any]) -> None:
    assert json.loads(BodyEncoder().encode(params)) == params


async def test_a_request_over_the_limit_is_refused_unsent_naming_its_exact_size(
    serve: StartServer, make_model: MakeModel
) -> None:
    server = await serve(scenario(reply("never")))
    model: AnthropicModel = make_model(server.base_url)
    # Two UTF-8 bytes per character: the size is the body's bytes, not its characters.
    request = simple_request(messages=(Message.user_text("é" * (REQUEST_LIMIT_BYTES // 2)),))
    with pytest.raises(ModelError) as refused:
        await collect(model, request)
    assert refused.value.status == 413
    size = int(str(refused.value).split(" bytes")[0].rsplit(" ", 1)[1].replace(",", ""))
    assert REQUEST_LIMIT_BYTES < size < REQUEST_LIMIT_BYTES + 2_000
    assert server.requests == []


def test_tools_and_system_are_encoded_again_only_when_their_source_changes() -> None:
    encoder = BodyEncoder()
    tools_source, system_source = ("tool specs",), ("system parts",)
    tools = [{"name": "Read", "description": "Reads.", "input_schema": {"type": "object"}}]

    def body(source: object, tools: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        params = {**_params(_user("hi")), "tools": tools}
        sources = {"tools": source, "system": system_source}
        return json.loads(encoder.encode(params, sources=sources, **kwargs))

    first = body(tools_source, tools)
    assert first == {**_params(_user("hi")), "tools": tools}
    # The same source (the object, or an equal tuple as a request's validation copies it):
    # the JSON sent before is reused (the change below is not seen).
    tools[0]["description"] = "changed"
    assert body(tools_source, tools)["tools"][0]["description"] == "Reads."
    assert body(tuple(list(tools_source)), tools)["tools"][0]["description"] == "Reads."
    # A background request with other tools does not replace what the user's turn reuses.
    other = [{"name": "Other", "description": "", "input_schema": {}}]
    assert body(("other specs",), other, keep=False)["tools"] == other
    assert body(tools_source, tools)["tools"][0]["description"] == "Reads."
    # Another source object: encoded from the params.
    assert body(("new specs",), tools)["tools"][0]["description"] == "changed"


def test_the_marked_first_message_is_reused_while_the_conversation_starts_the_same() -> None:
    def request(*texts: str) -> ModelRequest:
        return ModelRequest(
            model="claude-test",
            system=("sys",),
            messages=tuple(
                Message(role="user" if i % 2 == 0 else "assistant", content=(TextBlock(text=t),))
                for i, t in enumerate(texts)
            ),
        )

    first = request("memory files and the prompt", "ok", "go on")
    converted, kept = convert_messages(first.messages, {})
    marks: FirstMarks = {}
    one = to_api_params(first, converted=converted, first_marks=marks)
    assert one == to_api_params(first, converted=converted)  # the same breakpoints as before
    assert one["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in converted[0]["content"][0]  # the shared message is unmarked

    longer = request("memory files and the prompt", "ok", "go on", "done", "more")
    converted, kept = convert_messages((*first.messages, *longer.messages[3:]), kept)
    two = to_api_params(longer, converted=converted, first_marks=marks)
    assert two["messages"][0] is one["messages"][0]  # the body keeps its JSON for this object
    assert two == to_api_params(longer, converted=converted)

    other = request("another conversation", "ok", "go on")
    converted, _ = convert_messages(other.messages, {})
    three = to_api_params(other, converted=converted, first_marks=marks)
    assert three["messages"][0]["content"][0]["text"] == "another conversation"
    assert three["messages"][0] is not one["messages"][0]
