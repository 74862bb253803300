"""``AgentProtocol``: pygls' LSP protocol plus raw envelopes for the ``lspAgent/*`` methods.

Why raw envelopes: pygls decodes unknown methods' params into namedtuples (renaming keys that
are not identifiers) and silently drops a typed message whose params fail to decode, leaving
the client waiting forever. Decoding our methods into plain dicts and validating them in the
handlers (:mod:`lsp_agent.lsp.params`) gives real ``-32602`` errors instead.

The protocol also carries two guards around server -> client requests:

* :meth:`AgentProtocol._handle_response` ignores an answer to a request the server already
  gave up on (pygls 2.1.1 raises ``InvalidStateError`` on it; upstream issue #621, fixed after
  2.1.1 — drop the override when a release carries the fix);
* :meth:`AgentProtocol.abandon_request` sends ``$/cancelRequest`` and forgets the request.

Expected request errors (a ``JsonRpcException`` raised by a handler: bad params, unknown
session, busy) are answered without the traceback pygls would log for them.

Incoming bodies go through :meth:`AgentProtocol.handle_body` instead of pygls' decoding (see
docs/pygls-workarounds.md): the envelope is checked first (:mod:`lsp_agent.lsp.intake`), the
lifecycle next (``-32002`` before ``initialize``, ``-32600`` for a second ``initialize`` and
for any request once ``shutdown`` arrived), then the message is structured at the top level
only, with a converter that stops at the first error, so every request gets an answer.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Generator
from concurrent.futures import Future
from typing import Any

import attrs
import cattrs
from cattrs import Converter
from lsprotocol import converters, types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    _params_field_structure_hook,
    _result_field_structure_hook,
    lsp_method,
)
from pygls.protocol.json_rpc import MsgId

from lsp_agent import __version__
from lsp_agent.lsp import methods
from lsp_agent.lsp.intake import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    SERVER_NOT_INITIALIZED,
    Envelope,
    Fault,
    check_body,
)

logger = logging.getLogger(__name__)

_ABANDONED_MEMORY = 256
"""How many abandoned request ids to remember, to drop their late answers quietly."""


# ``jsonrpc`` has no default on purpose: lsprotocol's converter omits fields equal to their
# default when it serializes, and a message without ``"jsonrpc"`` is not decoded as JSON-RPC.


@attrs.define
class RawRequest:
    """A request whose ``params`` stay plain JSON (dict/list/None)."""

    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawNotification:
    """A notification whose ``params`` stay plain JSON."""

    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawResponse:
    """The client's answer to one of our custom requests, ``result`` as plain JSON."""

    id: int | str
    jsonrpc: str
    result: Any = None


class AgentProtocol(LanguageServerProtocol):
    """LSP protocol with the ``lspAgent/*`` envelopes, the late-response guard and the
    ``experimental.lspAgent`` server capability."""

    def __init__(self, server: Any, converter: Converter) -> None:
        super().__init__(server, converter)
        self._abandoned: OrderedDict[MsgId, None] = OrderedDict()
        self._intake = _fail_fast_converter()
        self.initialize_received = False
        self.shutdown_received = False
        self.refused = 0
        """Messages refused with an error (or dropped) by :meth:`handle_body`."""

    # ---- intake: every body the transport reads --------------------------------------------

    def frame_error(self, message: str) -> None:
        """A frame could not be read (bad ``Content-Length``): answer ``-32700`` with
        ``id: null``, as for a body that does not parse."""
        self.refuse(Fault(PARSE_ERROR, f"Parse error: {message}", None))

    def handle_body(self, body: bytes) -> None:
        """Check, gate, structure and dispatch one message body; never raises (except the
        ``SystemExit`` of ``exit``)."""
        checked = check_body(body)
        if isinstance(checked, Fault):
            self.refuse(checked)
            return
        try:
            self._handle_envelope(checked)
        except Exception:
            logger.exception("message %s (%s) failed", checked.msg_id, checked.method)
            if checked.kind == "request":
                self.refuse(Fault(-32603, "Internal error handling the message", checked.msg_id))

    def refuse(self, fault: Fault) -> None:
        """Answer ``fault`` (when it is answerable) and log it."""
        self.refused += 1
        logger.info("refused message %s: %s %s", fault.msg_id, fault.code, fault.message)
        if fault.answer:
            error = {"code": fault.code, "message": fault.message}
            self._send_data({"jsonrpc": "2.0", "id": fault.msg_id, "error": error})

    def _handle_envelope(self, envelope: Envelope) -> None:
        if envelope.kind == "response":
            self._handle_raw_response(envelope)
            return
        method = envelope.method or ""
        fault = self._lifecycle(envelope, method)
        if fault is not None:
            self.refuse(fault)
            return
        message_type = self.get_message_type(method)
        expects_id = message_type is None or (
            attrs.has(message_type) and "id" in attrs.fields_dict(message_type)
        )
        if envelope.kind == "request" and not expects_id:
            self.refuse(
                Fault(
                    INVALID_REQUEST,
                    f"Invalid request: {method} is a notification; it must not carry an id",
                    envelope.msg_id,
                )
            )
            return
        if envelope.kind == "notification" and message_type is not None and expects_id:
            self.refuse(
                Fault(INVALID_REQUEST, f"{method} is a request; it needs an id", None, answer=False)
            )
            return
        raw = envelope.raw
        if message_type is None:
            message_type = (
                JsonRPCRequestMessage if envelope.kind == "request" else JsonRPCNotification
            )
            raw = {"params": None, **raw}  # the generic envelopes require the member
        try:
            message = self._intake.structure(raw, message_type)
        except Exception as exc:  # cattrs raises many kinds; all mean "does not fit the type"
            self.refuse(
                Fault(
                    INVALID_PARAMS,
                    f"Invalid params for {method}: {_brief(exc)}",
                    envelope.msg_id,
                    answer=envelope.kind == "request",
                )
            )
            return
        if method == types.INITIALIZE:
            self.initialize_received = True
        elif method == types.SHUTDOWN:
            self.shutdown_received = True
        self.handle_message(message)

    def _lifecycle(self, envelope: Envelope, method: str) -> Fault | None:
        """LSP 3.17 lifecycle: nothing but ``initialize`` (and ``exit``) before
        ``initialize``; ``initialize`` once; nothing but ``exit`` after ``shutdown``."""
        request = envelope.kind == "request"
        if method == types.EXIT:
            return None
        if method == types.INITIALIZE and request:
            if self.initialize_received:
                return Fault(
                    INVALID_REQUEST,
                    "Invalid request: initialize was already received",
                    envelope.msg_id,
                )
            return None
        if not self.initialize_received:
            return Fault(
                SERVER_NOT_INITIALIZED,
                f"Server not initialized: {method} was sent before initialize",
                envelope.msg_id,
                answer=request,
            )
        if self.shutdown_received:
            return Fault(
                INVALID_REQUEST,
                f"Invalid request: {method} after shutdown",
                envelope.msg_id,
                answer=request,
            )
        return None

    def _handle_raw_response(self, envelope: Envelope) -> None:
        msg_id = envelope.msg_id
        raw = envelope.raw
        if msg_id is None:
            logger.warning("the client sent an error without an id: %.200s", raw.get("error"))
            return
        if "error" in raw:
            error = raw["error"]
            if not (isinstance(error, dict) and isinstance(error.get("code"), int)):
                error = {"code": -32603, "message": f"malformed error answer: {error!r:.200}"}
            self._handle_response(
                msg_id,
                None,
                types.ResponseError(
                    code=error["code"],
                    message=str(error.get("message", "")),
                    data=error.get("data"),
                ),
            )
            return
        result_type = self._result_types.pop(msg_id, None)
        try:
            message = self._intake.structure(raw, result_type or JsonRPCResponseMessage)
        except Exception as exc:
            logger.warning("malformed answer to request %s: %s", msg_id, _brief(exc))
            future = self._request_futures.pop(msg_id, None)
            if future is not None and not future.done():
                future.set_exception(JsonRpcInternalError(f"malformed answer: {_brief(exc)}"))
            return
        self._handle_response(msg_id, message.result)

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """Raw envelopes for our methods; lsprotocol's types for everything else."""
        if method in methods.REQUESTS:
            return RawRequest
        if method in methods.NOTIFICATIONS:
            return RawNotification
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """Answers to our server -> client requests arrive as plain dicts."""
        if method in methods.SERVER_REQUESTS:
            return RawResponse
        return super().get_result_type(method)

    def _handle_response(
        self, msg_id: MsgId, result: Any | None = None, error: Any | None = None
    ) -> None:
        pending = self._request_futures.get(msg_id)
        if (pending is not None and pending.done()) or msg_id in self._abandoned:
            # We stopped waiting (cancel or timeout); the late answer changes nothing.
            self._request_futures.pop(msg_id, None)
            self._abandoned.pop(msg_id, None)
            logger.debug("ignoring late answer to abandoned request %s", msg_id)
            return
        super()._handle_response(msg_id, result, error)

    def _send_handler_result(self, future: Future[Any], *, msg_id: MsgId) -> None:
        exc = None if future.cancelled() else future.exception()
        if isinstance(exc, JsonRpcException):
            self._request_futures.pop(msg_id, None)
            logger.info("request %s failed (%s): %s", msg_id, exc.code, exc.message)
            self._send_response(msg_id, error=exc.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def abandon_request(self, msg_id: MsgId) -> None:
        """Stop waiting for our request ``msg_id``: tell the client (``$/cancelRequest``) and
        forget it, so a late answer is dropped quietly."""
        future = self._request_futures.pop(msg_id, None)
        self._result_types.pop(msg_id, None)
        if future is not None and not future.done():
            future.cancel()
        self._abandoned[msg_id] = None
        while len(self._abandoned) > _ABANDONED_MEMORY:
            self._abandoned.popitem(last=False)
        self.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        """pygls' initialize, then our capability under ``experimental.lspAgent``."""
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        experimental = result.capabilities.experimental
        merged: dict[str, Any] = dict(experimental) if isinstance(experimental, dict) else {}
        merged["lspAgent"] = methods.agent_capabilities(__version__)
        result.capabilities.experimental = merged
        return result


def _fail_fast_converter() -> Converter:
    """lsprotocol's converter without cattrs' detailed validation: a wrong shape fails at
    the first error instead of collecting one per element (a 100 KB string where a list is
    expected took cattrs seconds per message, blocking the event loop)."""
    converter = converters.get_converter(cattrs.Converter(detailed_validation=False))
    converter.register_structure_hook(JsonRPCRequestMessage, _params_field_structure_hook)
    converter.register_structure_hook(JsonRPCResponseMessage, _result_field_structure_hook)
    converter.register_structure_hook(JsonRPCNotification, _params_field_structure_hook)
    return converter


def _brief(exc: BaseException, limit: int = 200) -> str:
    """One short line for a structuring error (never a formatted traceback)."""
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"
