"""Background model requests: requests the agent makes off the user's turn, such as the
summary prepared ahead of compaction and the session's title.

A background request never blocks the turn and never counts as one of its requests: it runs
in its own task, at most one per kind and session; starting a kind again cancels the one
running. Its failure (HTTP error, garbage, a dead endpoint) is logged and changes nothing:
the caller gets ``None`` and keeps its own way of doing without (the normal compaction path,
the first prompt as the title).

Each request carries its kind in the ``x-lsp-agent-background`` HTTP header
(:data:`BACKGROUND_HEADER`), sent through the SDK's ``extra_headers``: the Messages API
ignores headers it does not know, and the project's scripted server routes such requests to a
separate script per kind, so tests of the user's turn never see them.

They can be turned off: settings ``backgroundRequests: false``, or the environment variable
``LSP_AGENT_BACKGROUND_REQUESTS=0`` (which wins over the setting in both directions). The test
suite turns them off by default.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from lsp_agent.model.base import Model, ModelError
from lsp_agent.model.types import ModelRequest, ResponseDone, TextBlock, Usage

log = logging.getLogger(__name__)

BACKGROUND_HEADER = "x-lsp-agent-background"
"""HTTP header naming a background request's kind (the real API ignores it)."""

BACKGROUND_ENV = "LSP_AGENT_BACKGROUND_REQUESTS"
"""Environment variable switching background requests: ``0``/``false``/``no``/``off`` turn
them off, ``1``/``true``/``yes``/``on`` on; it wins over the ``backgroundRequests`` setting."""

BackgroundKind = Literal["summary", "title"]

_OFF = ("0", "false", "no", "off")
_ON = ("1", "true", "yes", "on")


def background_enabled(environ: Mapping[str, str] | None, setting: bool | None = None) -> bool:
    """Whether background requests may be made: :data:`BACKGROUND_ENV` when it holds a
    recognised value, else the ``backgroundRequests`` setting (``None``: not set), else on."""
    raw = (environ or {}).get(BACKGROUND_ENV, "").strip().lower()
    if raw in _OFF:
        return False
    if raw in _ON:
        return True
    return setting is not False


@dataclass(frozen=True, kw_only=True)
class BackgroundResult:
    """The text of a background request's complete answer and the tokens it used."""

    text: str
    usage: Usage


async def complete_text(model: Model, request: ModelRequest) -> BackgroundResult:
    """The text blocks of the complete answer to ``request`` (tool calls in it are ignored)
    and its usage. Raises :class:`ModelError` when the request fails or the stream ends
    without a complete answer."""
    stream = model.stream(request)
    try:
        async for event in stream:
            if isinstance(event, ResponseDone):
                blocks = event.response.content
                text = "".join(b.text for b in blocks if isinstance(b, TextBlock))
                return BackgroundResult(text=text, usage=event.response.usage)
    finally:
        with contextlib.suppress(Exception):
            await stream.aclose()  # type: ignore[attr-defined]
    raise ModelError("the model stream ended without a complete response")


Done = Callable[[BackgroundResult], None]
"""Called on the event loop with a background request's result when it succeeded."""


@dataclass(kw_only=True)
class BackgroundRequests:
    """One session's background requests (see the module doc). ``enabled`` False: nothing is
    ever sent and :meth:`start` returns ``None``. Only the event loop touches it."""

    model: Model
    enabled: bool = True
    tasks: dict[str, asyncio.Task[BackgroundResult | None]] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    """Tokens every finished background request used (paid for, but no turn's)."""

    def start(
        self, kind: BackgroundKind, request: ModelRequest, *, on_done: Done | None = None
    ) -> asyncio.Task[BackgroundResult | None] | None:
        """Send ``request`` as a background request of ``kind`` (the running one of that kind
        is cancelled). The task's result is ``None`` when the request failed (logged);
        ``on_done`` gets a successful result. ``None`` when background requests are off.
        Needs a running event loop."""
        if not self.enabled:
            return None
        self.cancel(kind)
        marked = request.model_copy(update={"background": kind})
        task = asyncio.ensure_future(self._run(kind, marked, on_done))
        self.tasks[kind] = task
        return task

    def running(self, kind: BackgroundKind) -> bool:
        """Whether a request of ``kind`` is still under way."""
        task = self.tasks.get(kind)
        return task is not None and not task.done()

    def cancel(self, kind: BackgroundKind) -> None:
        """Cancel the request of ``kind``, if one runs (idempotent)."""
        task = self.tasks.pop(kind, None)
        if task is not None and not task.done():
            task.cancel()

    def cancel_all(self) -> None:
        """Cancel every running request (``/clear``, closing the session)."""
        for kind in list(self.tasks):
            self.cancel(kind)  # type: ignore[arg-type]

    async def aclose(self) -> None:
        """Cancel every running request and wait until they have stopped (closing the
        session: no task outlives it)."""
        tasks = list(self.tasks.values())
        self.cancel_all()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(
        self, kind: str, request: ModelRequest, on_done: Done | None
    ) -> BackgroundResult | None:
        try:
            result = await complete_text(self.model, request)
        except ModelError as exc:
            # Ignored and not the user's concern: the turn's own request reports a problem the
            # two share (no key, endpoint down), so nothing reaches a terminal's default level.
            log.info("background %s request failed (ignored): %s", kind, exc)
            return None
        except Exception:
            log.exception("background %s request failed (ignored)", kind)
            return None
        self.usage = self.usage + result.usage
        if on_done is not None:
            try:
                on_done(result)
            except Exception:
                log.exception("handling the background %s answer failed (ignored)", kind)
        return result
