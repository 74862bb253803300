"""Decoding and checking one JSON-RPC message body before anything acts on it (pure).

:func:`check_body` turns the bytes of a frame into an :class:`Envelope` (a request, a
notification or a response, as plain JSON) or a :class:`Fault` carrying the JSON-RPC error to
answer. Rules (JSON-RPC 2.0 §4 and §5, LSP 3.17 "Base Protocol"):

* bytes that are not UTF-8 JSON: ``-32700`` (parse error), with the request's id when it can
  still be read (the body decoded with replacement characters), else ``id: null``; nesting too
  deep for the decoder is a parse error too;
* valid JSON that is not a message object (an array — LSP has no batches —, a number,
  ``jsonrpc`` other than the string ``"2.0"``, ``method`` not a string, an id that is not a
  string or an integer, a request that also carries ``result``/``error``, neither method nor
  id): ``-32600`` (invalid request), never executed;
* ``params`` that is neither an object nor an array (``null`` counts as absent): ``-32602``.

A fault for a message without a usable id is answered with ``id: null``; a malformed response
(client → server answer) cannot be answered and is only logged.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002
"""JSON-RPC 2.0 §5.1 codes and LSP's ``ServerNotInitialized``."""

MsgId = int | str

Kind = Literal["request", "notification", "response"]


@dataclass(frozen=True, slots=True)
class Envelope:
    """A well-formed message. ``raw`` is the decoded object (``params`` plain JSON);
    ``msg_id`` is ``None`` for a notification (and may be ``None`` in an error response)."""

    kind: Kind
    raw: dict[str, Any]
    method: str | None
    msg_id: MsgId | None


@dataclass(frozen=True, slots=True)
class Fault:
    """A message to refuse: answer ``code``/``message`` to ``msg_id`` (``None``: ``id:
    null``) unless ``answer`` is false (notifications and responses get no answer)."""

    code: int
    message: str
    msg_id: MsgId | None
    answer: bool = True


def valid_id(value: Any) -> bool:
    """Whether ``value`` may be a request id: a string or an integer (not a bool)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def check_body(body: bytes) -> Envelope | Fault:
    """Decode ``body`` (one frame) and check its envelope; see the module docstring."""
    try:
        # Strict: UTF-8 without a BOM (RFC 8259 §8.1), and no NaN/Infinity (not JSON).
        decoded = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError as exc:
        return Fault(
            PARSE_ERROR,
            f"Parse error: the message is not valid UTF-8 ({exc.reason} at byte {exc.start})",
            _salvage_id(body),
        )
    except RecursionError:
        return Fault(PARSE_ERROR, "Parse error: the message nests too deeply", _salvage_id(body))
    except ValueError as exc:
        return Fault(PARSE_ERROR, f"Parse error: {_short(str(exc))}", None)
    return check_message(decoded)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def check_message(message: Any) -> Envelope | Fault:
    """Check one decoded JSON value as a JSON-RPC 2.0 message object."""
    if not isinstance(message, dict):
        what = (
            "an array (batches are not part of LSP)"
            if isinstance(message, list)
            else (f"a JSON {type(message).__name__}")
        )
        return Fault(
            INVALID_REQUEST, f"Invalid request: the message is {what}, not an object", None
        )
    has_id = "id" in message
    msg_id = message.get("id")
    usable_id = msg_id if valid_id(msg_id) else None
    if message.get("jsonrpc") != "2.0":
        return Fault(
            INVALID_REQUEST,
            'Invalid request: "jsonrpc" must be the string "2.0"',
            usable_id,
            # A malformed answer of the client's is not answered (it would answer an answer).
            answer=not (has_id and "method" not in message),
        )
    if "method" not in message:
        return _check_response(message, has_id=has_id, msg_id=msg_id)
    method = message["method"]
    if not isinstance(method, str):
        return Fault(
            INVALID_REQUEST, 'Invalid request: "method" must be a string', usable_id, answer=has_id
        )
    if has_id and not valid_id(msg_id):
        return Fault(INVALID_REQUEST, 'Invalid request: "id" must be a string or an integer', None)
    if has_id and ("result" in message or "error" in message):
        return Fault(
            INVALID_REQUEST, 'Invalid request: a request carries no "result" or "error"', usable_id
        )
    params = message.get("params")
    if params is not None and not isinstance(params, dict | list):
        return Fault(
            INVALID_PARAMS,
            f"Invalid params for {_short(method)}: params must be an object or an array",
            usable_id,
            answer=has_id,
        )
    return Envelope(
        kind="request" if has_id else "notification", raw=message, method=method, msg_id=usable_id
    )


def _check_response(message: dict[str, Any], *, has_id: bool, msg_id: Any) -> Envelope | Fault:
    if not has_id:
        return Fault(INVALID_REQUEST, 'Invalid request: neither "method" nor "id"', None)
    if ("result" in message) == ("error" in message):
        return Fault(
            INVALID_REQUEST,
            'a response carries exactly one of "result" and "error"',
            None,
            answer=False,
        )
    if not (valid_id(msg_id) or (msg_id is None and "error" in message)):
        return Fault(INVALID_REQUEST, "a response with an invalid id", None, answer=False)
    return Envelope(kind="response", raw=message, method=None, msg_id=msg_id)


_TOP_LEVEL_ID = re.compile(rb'^\s*\{[^{}\[\]]*?"id"\s*:\s*("(?:[^"\\]|\\.){0,256}"|-?\d{1,20})')


def _salvage_id(body: bytes) -> MsgId | None:
    """The id of a message that failed to decode strictly: from a lenient decode (invalid
    UTF-8 replaced), else from an ``"id"`` member before the first nested value."""
    try:
        loose = json.loads(body.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        match = _TOP_LEVEL_ID.match(body[:4096])
        if match is None:
            return None
        try:
            loose = {"id": json.loads(match.group(1))}
        except ValueError:
            return None
    value = loose.get("id") if isinstance(loose, dict) else None
    return value if valid_id(value) else None


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
