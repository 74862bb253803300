"""The tool calls in flight on one server connection, so that turning the server off cancels
them cleanly and says why.

:class:`CallScopes` belongs to one :class:`~lsp_agent.mcp.connection.ServerConnection` (kept
by the pool beside it). Each tool call runs inside :meth:`CallScopes.guard`, an anyio cancel
scope; :meth:`CallScopes.stop` cancels them all (the SDK tells the server the request was
cancelled) before the connection closes, and each then fails with
:class:`~lsp_agent.mcp.connection.CallFailedError` naming why (``"turned off"``). A call
started after :meth:`stop` fails at once the same way. :attr:`CallScopes.why` is also the
sign, for a turn's tool set (:mod:`.turn_tools`), that the server's tools are gone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import anyio

from lsp_agent.mcp.connection import CallFailedError


class CallScopes:
    """See the module docstring. Event-loop only."""

    def __init__(self, *, server: str) -> None:
        self.server = server
        self.why: str | None = None
        """Why the server stopped for good (``None``: it has not)."""
        self._scopes: set[anyio.CancelScope] = set()

    def stop(self, why: str) -> None:
        """Cancel every call in flight; later calls fail at once. ``why`` ends "was ...":
        ``"turned off"``, ``"removed from the configuration"``."""
        self.why = why
        for scope in list(self._scopes):
            scope.cancel()

    @contextlib.contextmanager
    def guard(self, what: str) -> Iterator[None]:
        """Run the block (one call of tool ``what``) so :meth:`stop` can cancel it. Raises
        :class:`CallFailedError` naming why when the server was stopped before or during the
        call (whatever the cancelled call raised is dropped)."""
        if self.why is not None:
            raise CallFailedError(f"MCP server {self.server!r} was {self.why}")
        scope = anyio.CancelScope()
        self._scopes.add(scope)
        try:
            with scope:
                yield
        except CallFailedError:
            if not scope.cancel_called:
                raise
        finally:
            self._scopes.discard(scope)
        if scope.cancel_called:
            raise CallFailedError(
                f"MCP server {self.server!r} was {self.why or 'stopped'} while {what} ran; "
                "the call was cancelled"
            )
