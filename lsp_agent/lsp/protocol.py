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
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Generator
from concurrent.futures import Future
from typing import Any

import attrs
from cattrs import Converter
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import MsgId

from lsp_agent import __version__
from lsp_agent.lsp import methods

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
