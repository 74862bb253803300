"""Elicitation forms shown as forms: which schemas qualify, and checking the user's answer.

MCP 2025-06-18 (``elicitation/create``, "Requested Schema") restricts a form to a flat object
whose properties are primitives: ``string`` (``minLength``, ``maxLength``, ``format`` one of
``email``, ``uri``, ``date``, ``date-time``), ``number`` / ``integer`` (``minimum``,
``maximum``), ``boolean``, and string enums (``enum``, optional ``enumNames`` as labels), with
a top-level ``required`` list. :func:`form_problem` tells whether a schema is such a form;
:func:`check_answer` checks what the editor sent back against it before the server gets it,
and :func:`ask_form` asks until the answer is valid (at most :data:`MAX_ATTEMPTS` times).

Pure apart from the injected ``form`` coroutine; no SDK import.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable
from typing import Any

FormFn = Callable[[str, dict[str, Any], tuple[str, ...]], Awaitable[tuple[str, Any]]]
"""Shows a form: ``(message, requested schema, problems of the last answer)`` →
``(action, content)`` as the editor answered (``action`` unchecked)."""

MAX_ATTEMPTS = 3
"""Answers asked for at most; after that many invalid ones the request is cancelled."""

MAX_FIELDS = 20
"""Fields a form may have (a longer one is declined)."""

ACTIONS = ("accept", "decline", "cancel")

_TYPES = ("string", "number", "integer", "boolean")
_FORMATS = ("email", "uri", "date", "date-time")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


def form_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a form the editor can show (``None``: it is one)."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return "the requested schema is not an object"
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return "its properties are not an object"
    if len(properties) > MAX_FIELDS:
        return f"it has {len(properties)} fields (at most {MAX_FIELDS} are shown)"
    for name, field in properties.items():
        if not isinstance(field, dict) or field.get("type") not in _TYPES:
            return f"field {name!r} is not a string, number, integer or boolean"
        values = field.get("enum")
        if values is not None and (
            field.get("type") != "string"
            or not isinstance(values, list)
            or not values
            or not all(isinstance(v, str) for v in values)
        ):
            return f"field {name!r} has an enum that is not a list of strings"
        labels = field.get("enumNames")
        if labels is not None and not (
            isinstance(labels, list)
            and isinstance(values, list)
            and len(labels) == len(values)
            and all(isinstance(label, str) for label in labels)
        ):
            return f"field {name!r} has enumNames that are not one text per enum value"
        if field.get("format") not in (None, *_FORMATS):
            return f"field {name!r} has format {field.get('format')!r}"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(
        isinstance(r, str) and r in properties for r in required
    ):
        return "its required list names fields it does not have"
    return None


def _string_problem(name: str, field: dict[str, Any], value: Any) -> str | None:
    if not isinstance(value, str):
        return f"{name}: expected text"
    values = field.get("enum")
    if values is not None and value not in values:
        return f"{name}: must be one of {', '.join(values)}"
    low, high = field.get("minLength"), field.get("maxLength")
    if isinstance(low, int) and len(value) < low:
        return f"{name}: at least {low} characters"
    if isinstance(high, int) and len(value) > high:
        return f"{name}: at most {high} characters"
    fmt = field.get("format")
    try:
        if fmt == "date":
            dt.date.fromisoformat(value)
        elif fmt == "date-time":
            dt.datetime.fromisoformat(value)
    except ValueError:
        return f"{name}: not a valid {fmt} (ISO 8601)"
    if (fmt == "email" and not _EMAIL.match(value)) or (fmt == "uri" and not _URI.match(value)):
        return f"{name}: not a valid {fmt}"
    return None


def _number(field: dict[str, Any], value: Any) -> int | float | None:
    """``value`` as the field's number type, or ``None`` when it is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if field.get("type") == "integer":
        if isinstance(value, float) and not value.is_integer():
            return None
        return int(value)
    return value


def _field_problem(name: str, field: dict[str, Any], value: Any) -> tuple[str | None, Any]:
    """``(problem, value to send)`` of one field's non-empty answer."""
    kind = field.get("type")
    if kind == "string":
        return _string_problem(name, field, value), value
    if kind == "boolean":
        return (None if isinstance(value, bool) else f"{name}: expected true or false"), value
    number = _number(field, value)
    low, high = field.get("minimum"), field.get("maximum")
    if number is None:
        return f"{name}: expected {'a whole number' if kind == 'integer' else 'a number'}", value
    if isinstance(low, int | float) and number < low:
        return f"{name}: at least {low}", value
    if isinstance(high, int | float) and number > high:
        return f"{name}: at most {high}", value
    return None, number


def check_answer(schema: dict[str, Any], content: Any) -> tuple[dict[str, Any], list[str]]:
    """``(content to send, problems)`` for an accepted form's ``content`` (a schema that
    passed :func:`form_problem`). Problems name the field and the rule it breaks: a missing
    required field, an unknown field, a wrong type, an enum value not offered, a length,
    bound or format not met. Integers given as ``3.0`` are sent as ``3``."""
    if not isinstance(content, dict):
        return {}, ["the answer is not an object of fields"]
    properties: dict[str, Any] = schema.get("properties", {})
    problems = [f"{name}: not a field of this form" for name in content if name not in properties]
    problems += [
        f"{name}: required"
        for name in schema.get("required", [])
        if content.get(name) is None or content.get(name) == ""
    ]
    clean: dict[str, Any] = {}
    for name, field in properties.items():
        value = content.get(name)
        if value is None or (value == "" and name not in schema.get("required", [])):
            continue
        problem, value = _field_problem(name, field, value)
        if problem is None:
            clean[name] = value
        else:
            problems.append(problem)
    return clean, problems


async def ask_form(
    message: str, schema: dict[str, Any], *, form: FormFn
) -> tuple[str, dict[str, Any] | None]:
    """Ask with ``form`` until the answer is valid: ``(action, content)`` for the server.
    An invalid accepted answer is asked again with its problems; after :data:`MAX_ATTEMPTS`
    the request is cancelled. An unknown action counts as ``cancel``."""
    problems: tuple[str, ...] = ()
    for _ in range(MAX_ATTEMPTS):
        action, content = await form(message, schema, problems)
        if action != "accept":
            return (action if action in ACTIONS else "cancel"), None
        clean, found = check_answer(schema, content)
        if not found:
            return "accept", clean
        problems = tuple(found)
    return "cancel", None
