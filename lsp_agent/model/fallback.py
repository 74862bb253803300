"""``--fallback-model``: when the model is overloaded, switch to another one (Claude Code's
``--fallback-model``, for ``-p`` runs).

:class:`FallbackModel` wraps a :class:`~lsp_agent.model.base.Model`. A request that fails with
an overload — HTTP 529 or an ``overloaded_error`` in the stream — after the inner client's own
retries (so: repeated overload) and before any of its answer was streamed is sent again with
the fallback model, and every later request of the session uses the fallback too. Its output
cap is cut to what the fallback model accepts (the model table). Any other failure, an overload
after part of the answer arrived, or one of the fallback model itself, is raised unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable

from lsp_agent.model.base import Model, ModelError
from lsp_agent.model.limits import limits_for
from lsp_agent.model.types import ModelRequest, ModelStreamEvent, RetryWait

log = logging.getLogger(__name__)

OVERLOADED_STATUS = 529


def is_overload(error: ModelError) -> bool:
    """Whether ``error`` says the model is overloaded (HTTP 529, or the stream's
    ``overloaded_error``, which the client maps to 529)."""
    return error.status == OVERLOADED_STATUS


class FallbackModel:
    """A model that moves to ``fallback`` (a model name) after an overload; see the module doc.
    ``on_switch(primary, fallback, error)`` is called once, when it moves (to tell the user)."""

    def __init__(
        self,
        *,
        inner: Model,
        fallback: str,
        on_switch: Callable[[str, str, ModelError], None] | None = None,
    ) -> None:
        self.inner = inner
        self.fallback = fallback
        self.on_switch = on_switch
        self.switched = False

    def _for_fallback(self, request: ModelRequest) -> ModelRequest:
        cap = limits_for(self.fallback).max_output_tokens
        return request.model_copy(
            update={"model": self.fallback, "max_tokens": min(request.max_tokens, cap)}
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """The inner model's stream, on the fallback model after an overload."""
        if self.switched:
            request = self._for_fallback(request)
        started = False
        try:
            async for event in self.inner.stream(request):
                started = started or not isinstance(event, RetryWait)
                yield event
            return
        except ModelError as exc:
            if started or self.switched or request.model == self.fallback or not is_overload(exc):
                raise
            self.switched = True
            log.warning(
                "%s is overloaded; switching to the fallback model %s", request.model, self.fallback
            )
            if self.on_switch is not None:
                self.on_switch(request.model, self.fallback, exc)
        async for event in self.inner.stream(self._for_fallback(request)):
            yield event

    async def aclose(self) -> None:
        """Close the inner model."""
        await self.inner.aclose()
