"""A server's elicitation request as a question with buttons, and the answer back.

An editor that declares forms (the LSP door's ``mcpElicitation`` client capability) gets
every form as one (:mod:`.elicit_form`). Otherwise questions are shown with
``window/showMessageRequest`` (a message and buttons, which every LSP client has), so the
forms shown are those a few buttons answer: no fields (Accept / Decline), one boolean field
(Yes / No / Decline) or one field with an ``enum`` of strings (one button per value, then
Decline). Any other form is declined with a log line, as is every request when nobody can
answer (``run -p``). Closing the question without a button is ``cancel``.

A URL-mode request (MCP 2025-11-25: the server wants the user to visit a page, e.g. to connect
an account, without the data passing through the client) is asked as consent naming the page's
host (:func:`url_consent`); only ``http``/``https`` URLs with a host are asked, others are
declined. Pure functions; no SDK import.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

AskFn = Callable[[str, str, dict[str, Any]], Awaitable[tuple[str, dict[str, Any] | None]]]
"""Asks the user: ``(server name, message, requested schema)`` → ``(action, content)`` for
the server (``action`` one of ``accept``, ``decline``, ``cancel``)."""

MAX_CHOICES = 10
"""Enum values shown as buttons at most (a longer enum cannot be shown)."""

AskUrlFn = Callable[[str, str, str], Awaitable[str]]
"""Asks the user to open a page: ``(server name, message, url)`` → the elicitation action
(``accept``: they agreed and it was opened, ``decline``, ``cancel``)."""

DECLINE = "Decline"


def url_host(url: str) -> str | None:
    """The host of an ``http``/``https`` URL as the browser will open it (ASCII: a host in
    another script in its punycode form), or ``None`` for any other URL (not asked). An
    authority holding a backslash or userinfo is ``None`` too: browsers (the WHATWG URL
    standard) end the host at a backslash, so ``https://evil.example\\@docs.example/`` opens
    evil.example while this parser reads docs.example, and ``user@`` disguises the host."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        if host is not None:
            host = host.encode("idna").decode("ascii")
    except (ValueError, UnicodeError):
        return None
    if "\\" in parts.netloc or "@" in parts.netloc:
        return None
    return host if parts.scheme.lower() in ("http", "https") and host else None


def url_consent(server: str, message: str, url: str) -> tuple[str, str] | None:
    """``(question, open button)`` asking consent to open ``url`` for MCP server ``server``:
    the question names the host first, then the server's ``message`` and the whole URL (the
    MCP spec asks clients to show it before consent). ``None`` when ``url`` is not asked
    (:func:`url_host`)."""
    host = url_host(url)
    if host is None:
        return None
    question = f"MCP server {server!r} asks you to open a page on {host}: {message}\n{url}"
    return question, f"Open {host}"


@dataclass(frozen=True, kw_only=True)
class Question:
    """The buttons to show and, for each, the elicitation ``(action, content)`` it gives."""

    choices: tuple[str, ...]
    answers: dict[str, tuple[str, dict[str, Any] | None]]

    def answer(self, choice: str | None) -> tuple[str, dict[str, Any] | None]:
        """``(action, content)`` for the button pressed (``None``: closed without one)."""
        if choice is None or choice not in self.answers:
            return "cancel", None
        return self.answers[choice]


def question_for(schema: Any) -> Question | None:
    """The question that answers a form with ``schema`` (its ``requestedSchema``), or ``None``
    when buttons cannot (see the module docstring)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not properties:
        return Question(
            choices=("Accept", DECLINE),
            answers={"Accept": ("accept", {}), DECLINE: ("decline", None)},
        )
    if not isinstance(properties, dict) or len(properties) != 1:
        return None
    [(name, field)] = properties.items()
    if not isinstance(field, dict):
        return None
    if field.get("type") == "boolean":
        return Question(
            choices=("Yes", "No", DECLINE),
            answers={
                "Yes": ("accept", {name: True}),
                "No": ("accept", {name: False}),
                DECLINE: ("decline", None),
            },
        )
    values = field.get("enum")
    if (
        isinstance(values, list)
        and 0 < len(values) <= MAX_CHOICES
        and all(isinstance(v, str) and v and v != DECLINE for v in values)
        and len(set(values)) == len(values)
    ):
        answers: dict[str, tuple[str, dict[str, Any] | None]] = {
            v: ("accept", {name: v}) for v in values
        }
        answers[DECLINE] = ("decline", None)
        return Question(choices=(*values, DECLINE), answers=answers)
    return None
