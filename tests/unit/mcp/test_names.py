"""Tool names and schemas as the Messages API accepts them."""

from __future__ import annotations

import re

from lsp_agent.mcp.names import MAX_TOOL_NAME, normalize_schema, server_part, tool_names

API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_names_are_prefixed_sanitised_and_never_bare_builtins() -> None:
    names = tool_names("my server.v2", ["Read", "Bash", "get data", "ok-name"])
    assert names == {
        "Bash": "mcp__my_server_v2__Bash",
        "Read": "mcp__my_server_v2__Read",
        "get data": "mcp__my_server_v2__get_data",
        "ok-name": "mcp__my_server_v2__ok-name",
    }
    assert all(API_NAME.match(n) for n in names.values())


def test_double_underscores_in_server_names_cannot_fake_a_tool_part() -> None:
    # A server named "a__b" must not produce names that rules for server "a" would cover.
    assert server_part("a__b") == "a_b"
    assert tool_names("a__b", ["t"]) == {"t": "mcp__a_b__t"}


def test_long_and_colliding_names_stay_unique_and_within_the_limit() -> None:
    names = tool_names("srv", ["x" * 100, "x" * 101, "a b", "a_b", "a.b"])
    assert len(set(names.values())) == 5
    assert all(len(n) <= MAX_TOOL_NAME and API_NAME.match(n) for n in names.values())
    # Deterministic whatever the order.
    assert names == tool_names("srv", ["a.b", "a_b", "a b", "x" * 101, "x" * 100])


def test_schema_top_level_combinators_are_folded() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "anyOf": [
            {
                "type": "object",
                "properties": {"a": {"type": "string"}, "c": {}},
                "required": ["a", "c"],
            },
            {
                "type": "object",
                "properties": {"b": {"type": "integer"}, "c": {}},
                "required": ["c"],
            },
        ],
    }
    out = normalize_schema(schema, where="t")
    assert out == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "c": {}, "b": {"type": "integer"}},
        "required": ["c"],
    }


def test_schema_garbage_becomes_an_empty_object() -> None:
    assert normalize_schema(None, where="t") == {"type": "object", "properties": {}}
    assert normalize_schema({"type": "string"}, where="t")["type"] == "object"
    assert normalize_schema({"properties": 3}, where="t")["properties"] == {}
    kept = {"type": "object", "properties": {"x": {"oneOf": [{"type": "string"}]}}}
    assert normalize_schema(kept, where="t") == kept  # nested combinators are fine
