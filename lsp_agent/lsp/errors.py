"""JSON-RPC errors the LSP door answers with (codes listed in docs/protocol.md).

``-32602`` (invalid params) covers malformed payloads and unknown session ids; the
server-defined codes below cover the rest. Every error message names the problem so a client
can show it as is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

if TYPE_CHECKING:
    # Only for annotations: this module is imported before ``initialize`` is answered.
    from pydantic import ValidationError

MODEL_ERROR = -32000
"""The model endpoint failed for this turn (after the SDK's retries); the session stays usable."""

SESSION_BUSY = -32001
"""A prompt was sent to a session that is already running one."""


class ModelError(JsonRpcException):
    """``-32000``: the turn failed because the model call failed; ``data`` holds
    ``{stopReason, usage}`` of what ran before the failure."""

    CODE = MODEL_ERROR
    MESSAGE = "Model error"


class SessionBusyError(JsonRpcException):
    """``-32001``: the session is already running a prompt."""

    CODE = SESSION_BUSY
    MESSAGE = "Session busy"


def invalid_params(message: str) -> JsonRpcInvalidParams:
    """A ``-32602`` error with ``message`` as is."""
    return JsonRpcInvalidParams(message)


def describe_validation_error(method: str, error: ValidationError) -> str:
    """One line per problem, each naming the field by its JSON path.

    ``"invalid params for lspAgent/session/prompt: prompt[0].text: Field required"``.
    """
    problems = [f"{_json_path(e['loc'])}: {e['msg']}" for e in error.errors(include_url=False)]
    return f"invalid params for {method}: " + "; ".join(problems)


def _json_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif path:
            path += f".{part}"
        else:
            path = str(part)
    return path or "params"
