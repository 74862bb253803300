"""Elicitation forms: which schemas are forms, checking answers, asking again."""

from __future__ import annotations

import asyncio
from typing import Any

from lsp_agent.mcp.elicit_form import MAX_ATTEMPTS, ask_form, check_answer, form_problem

FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 5},
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "ratio": {"type": "number", "maximum": 1},
        "ok": {"type": "boolean"},
        "size": {"type": "string", "enum": ["S", "M"], "enumNames": ["Small", "Medium"]},
    },
    "required": ["name", "age"],
}


def test_flat_primitive_forms_qualify_and_others_say_why() -> None:
    assert form_problem(FORM) is None
    assert form_problem({"type": "object", "properties": {}}) is None
    assert form_problem([]) == "the requested schema is not an object"
    nested = {"properties": {"a": {"type": "object", "properties": {}}}}
    assert "field 'a' is not a string" in str(form_problem(nested))
    assert "enum" in str(form_problem({"properties": {"a": {"type": "number", "enum": [1]}}}))
    assert "format" in str(form_problem({"properties": {"a": {"type": "string", "format": "x"}}}))
    bad_required = {"properties": {"a": {"type": "string"}}, "required": ["b"]}
    assert "required" in str(form_problem(bad_required))
    # A name that is not a string (a list is not even hashable) is a problem, not a crash.
    for required in ([["a"]], [{"a": 1}], [1], "a"):
        unhashable = {"properties": {"a": {"type": "string"}}, "required": required}
        assert "required" in str(form_problem(unhashable)), required
    for names in (["Small"], ["Small", 2], "Small,Medium"):
        labels = {"properties": {"a": {"type": "string", "enum": ["S", "M"], "enumNames": names}}}
        assert "enumNames" in str(form_problem(labels)), names


def test_a_good_answer_is_passed_on_with_whole_numbers_as_integers() -> None:
    content = {
        "name": "Ada",
        "email": "ada@example.org",
        "site": "https://example.org",
        "born": "1815-12-10",
        "at": "2026-12-01T23:00:00+00:00",
        "age": 36.0,
        "ratio": 0.5,
        "ok": False,
        "size": "M",
    }
    clean, problems = check_answer(FORM, content)
    assert problems == []
    assert clean == {**content, "age": 36}
    assert isinstance(clean["age"], int)
    # optional text left empty is left out rather than sent as ""
    assert check_answer(FORM, {"name": "Ada", "age": 3, "email": ""}) == (
        {"name": "Ada", "age": 3},
        [],
    )


def test_every_broken_rule_is_named() -> None:
    content = {
        "name": "A",
        "email": "not-an-address",
        "site": "no scheme",
        "born": "10/12/1815",
        "at": "yesterday",
        "age": 1.5,
        "ratio": 2,
        "ok": "yes",
        "size": "L",
        "extra": 1,
    }
    _clean, problems = check_answer(FORM, content)
    assert problems == [
        "extra: not a field of this form",
        "name: at least 2 characters",
        "email: not a valid email",
        "site: not a valid uri",
        "born: not a valid date (ISO 8601)",
        "at: not a valid date-time (ISO 8601)",
        "age: expected a whole number",
        "ratio: at most 1",
        "ok: expected true or false",
        "size: must be one of S, M",
    ]
    assert check_answer(FORM, {"name": "Adalbert", "age": True})[1] == [
        "name: at most 5 characters",
        "age: expected a whole number",
    ]
    assert check_answer(FORM, {})[1] == ["name: required", "age: required"]
    assert check_answer(FORM, "text")[1] == ["the answer is not an object of fields"]


def test_ask_form_asks_again_with_the_problems_then_gives_up() -> None:
    asked: list[tuple[str, ...]] = []
    answers: list[tuple[str, Any]] = [
        ("accept", {"name": "A", "age": 1}),
        ("accept", {"name": "Ada", "age": 1}),
    ]

    async def form(message: str, schema: dict[str, Any], problems: tuple[str, ...]) -> Any:
        asked.append(problems)
        return answers.pop(0)

    result = asyncio.run(ask_form("Who?", FORM, form=form))
    assert result == ("accept", {"name": "Ada", "age": 1})
    assert asked == [(), ("name: at least 2 characters",)]

    async def always_wrong(message: str, schema: dict[str, Any], problems: tuple[str, ...]) -> Any:
        return "accept", {}

    assert asyncio.run(ask_form("Who?", FORM, form=always_wrong)) == ("cancel", None)
    assert MAX_ATTEMPTS == 3

    async def decline(message: str, schema: dict[str, Any], problems: tuple[str, ...]) -> Any:
        return "decline", {"name": "ignored"}

    assert asyncio.run(ask_form("Who?", FORM, form=decline)) == ("decline", None)

    async def garbage(message: str, schema: dict[str, Any], problems: tuple[str, ...]) -> Any:
        return "maybe", None

    assert asyncio.run(ask_form("Who?", FORM, form=garbage)) == ("cancel", None)
