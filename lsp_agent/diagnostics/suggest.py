"""Proactive fix suggestions: compute a fix for a persisting error in the background.

:class:`SuggestionEngine` watches the editor's error diagnostics (told by the door). When an
error has stayed for ``delayMs`` it asks ``compute`` for a replacement of the lines around it,
one job at a time per document and at most one start per ``minIntervalMs`` overall (rate
limit), each bounded by ``timeoutMs``. A job is cancelled as soon as the user edits its region
(or the whole document when the door cannot say where the edit was), and dropped when the
error goes away. A finished fix becomes a :class:`Suggestion`; it is re-anchored against the
current text whenever it is offered and dropped once its region no longer holds the text it was
computed for. Nothing here applies an edit: the door offers it as a quick fix the user picks.

:func:`model_fix` is the ``compute`` backed by the session model: one request without tools,
asking for the corrected lines in a fenced block.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.diagnostics.config import SuggestConfig
from lsp_agent.diagnostics.model import Diagnostic
from lsp_agent.diagnostics.positions import split_lines
from lsp_agent.model.base import Model, ModelError
from lsp_agent.model.types import Message, ModelRequest, ResponseDone

logger = logging.getLogger(__name__)

REGION_CONTEXT = 2
"""Lines above and below the error that a suggestion may rewrite."""


@dataclass(frozen=True, kw_only=True)
class FixRequest:
    """What ``compute`` gets: the document text at ``version``, the error, and the region
    (0-based lines ``first``..``last`` inclusive) whose replacement it must return."""

    path: Path
    version: int
    text: str
    diagnostic: Diagnostic
    first: int
    last: int

    @property
    def region(self) -> str:
        """The text of the region's lines, joined with ``\\n``."""
        return "\n".join(split_lines(self.text)[self.first : self.last + 1])


@dataclass(frozen=True, kw_only=True)
class Suggestion:
    """A computed fix: replace the lines holding ``old`` (``first``..``last`` in the text it
    was anchored to) by ``new``. ``title`` is for the quick fix; ``id`` is unique."""

    id: str
    path: Path
    diagnostic: Diagnostic
    first: int
    last: int
    old: str
    new: str
    title: str


Compute = Callable[[FixRequest], Awaitable[str | None]]
"""Returns the replacement text of the region (``None``: no fix)."""


def _key(diagnostic: Diagnostic) -> tuple[str, str | None, str, int]:
    return (diagnostic.source, diagnostic.code, diagnostic.message, diagnostic.line)


@dataclass(kw_only=True)
class _Doc:
    version: int = 0
    text: str = ""
    first_seen: dict[tuple[str, str | None, str, int], float] = field(default_factory=dict)
    errors: dict[tuple[str, str | None, str, int], Diagnostic] = field(default_factory=dict)
    job: asyncio.Task[None] | None = None
    job_region: tuple[int, int] | None = None
    job_key: tuple[str, str | None, str, int] | None = None
    done: set[tuple[str, str | None, str, int]] = field(default_factory=set)
    suggestions: list[Suggestion] = field(default_factory=list)


class SuggestionEngine:
    """See the module docstring. ``on_ready`` is called with each new suggestion; ``clock``
    returns monotonic seconds. Event-loop only."""

    def __init__(
        self,
        *,
        config: SuggestConfig,
        compute: Compute,
        on_ready: Callable[[Suggestion], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.compute = compute
        self.on_ready = on_ready
        self.clock = clock
        self._docs: dict[Path, _Doc] = {}
        self._last_start: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._ids = itertools.count(1)
        self.cancelled_jobs = 0

    @property
    def enabled(self) -> bool:
        """Whether suggestions are switched on."""
        return self.config.enabled

    # ---- what the door tells us ----------------------------------------------------------------

    def document_changed(
        self, path: Path, version: int, text: str, changed: Sequence[tuple[int, int]] | None
    ) -> None:
        """The editor's text of ``path`` is now ``text`` at ``version``. ``changed`` are the
        0-based line ranges (inclusive, in the old text) the edit touched; ``None`` means
        unknown (treated as everywhere). A running job whose region was touched is cancelled."""
        doc = self._docs.setdefault(path, _Doc())
        doc.version, doc.text = version, text
        if doc.job is not None and doc.job_region is not None and not doc.job.done():
            first, last = doc.job_region
            if changed is None or any(a <= last and b >= first for a, b in changed):
                doc.job.cancel()
                self.cancelled_jobs += 1
                if doc.job_key is not None:
                    doc.first_seen.pop(doc.job_key, None)
        doc.suggestions = [s for s in doc.suggestions if _anchor(s, text) is not None]

    def diagnostics_changed(
        self, path: Path, version: int, text: str, diagnostics: Sequence[Diagnostic]
    ) -> None:
        """The editor's current diagnostics of ``path`` (for ``text`` at ``version``)."""
        if not self.enabled:
            return
        doc = self._docs.setdefault(path, _Doc())
        doc.version, doc.text = version, text
        now = self.clock()
        errors = {_key(d): d for d in diagnostics if d.severity == 1}
        doc.first_seen = {k: doc.first_seen.get(k, now) for k in errors}
        doc.errors = errors
        doc.done &= set(errors)
        if doc.job is not None and doc.job_key not in errors and not doc.job.done():
            doc.job.cancel()
            self.cancelled_jobs += 1
        self._schedule()

    def forget(self, path: Path) -> None:
        """The document was closed: cancel its job, drop its suggestions."""
        doc = self._docs.pop(path, None)
        if doc is not None and doc.job is not None:
            doc.job.cancel()

    def suggestions(self, path: Path) -> list[tuple[Suggestion, int, int]]:
        """Valid suggestions for ``path``: each with the 0-based lines ``first``..``last`` of
        the current text it replaces."""
        doc = self._docs.get(path)
        if doc is None:
            return []
        out = []
        for suggestion in doc.suggestions:
            anchored = _anchor(suggestion, doc.text)
            if anchored is not None:
                out.append((suggestion, *anchored))
        return out

    def take(self, path: Path, suggestion_id: str) -> None:
        """Drop a suggestion (applied or dismissed by the user)."""
        doc = self._docs.get(path)
        if doc is not None:
            doc.suggestions = [s for s in doc.suggestions if s.id != suggestion_id]

    def close(self) -> None:
        """Cancel every job and the timer."""
        if self._timer is not None:
            self._timer.cancel()
        for doc in self._docs.values():
            if doc.job is not None:
                doc.job.cancel()

    # ---- scheduling ----------------------------------------------------------------------------

    def _schedule(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        due = self._next_due()
        if due is None:
            return
        delay = max(0.0, due - self.clock())
        self._timer = asyncio.get_running_loop().call_later(delay, self._tick)

    def _next_due(self) -> float | None:
        candidates = [
            seen + self.config.delay_ms / 1000
            for doc in self._docs.values()
            if doc.job is None or doc.job.done()
            for key, seen in doc.first_seen.items()
            if key not in doc.done
        ]
        if not candidates:
            return None
        due = min(candidates)
        if self._last_start is not None:
            due = max(due, self._last_start + self.config.min_interval_ms / 1000)
        return due

    def _tick(self) -> None:
        self._timer = None
        now = self.clock()
        if (
            self._last_start is not None
            and now < self._last_start + self.config.min_interval_ms / 1000
        ):
            self._schedule()
            return
        best: tuple[float, Path, tuple[str, str | None, str, int]] | None = None
        for path, doc in self._docs.items():
            if doc.job is not None and not doc.job.done():
                continue
            for key, seen in doc.first_seen.items():
                if key in doc.done or seen + self.config.delay_ms / 1000 > now:
                    continue
                if best is None or seen < best[0]:
                    best = (seen, path, key)
        if best is not None:
            _seen, path, key = best
            self._start(path, self._docs[path], key)
        self._schedule()

    def _start(self, path: Path, doc: _Doc, key: tuple[str, str | None, str, int]) -> None:
        diagnostic = doc.errors[key]
        lines = split_lines(doc.text)
        # A text ending with a line break has an empty last "line" that is not worth offering.
        count = len(lines) - 1 if len(lines) > 1 and lines[-1] == "" else len(lines)
        first = max(0, diagnostic.range.start.line - REGION_CONTEXT)
        last = max(first, min(count - 1, diagnostic.range.end.line + REGION_CONTEXT))
        request = FixRequest(
            path=path,
            version=doc.version,
            text=doc.text,
            diagnostic=diagnostic,
            first=first,
            last=last,
        )
        self._last_start = self.clock()
        doc.done.add(key)
        doc.job_region = (first, last)
        doc.job_key = key
        doc.job = asyncio.ensure_future(self._run(path, doc, request))

    async def _run(self, path: Path, doc: _Doc, request: FixRequest) -> None:
        try:
            async with asyncio.timeout(self.config.timeout_ms / 1000):
                new = await self.compute(request)
        except asyncio.CancelledError:
            return
        except TimeoutError:
            logger.info("fix suggestion for %s timed out", path)
            return
        except Exception:
            logger.exception("computing a fix suggestion for %s failed", path)
            return
        finally:
            self._schedule_soon()
        old = request.region
        if new is None or new == old:
            return
        suggestion = Suggestion(
            id=f"s{next(self._ids)}",
            path=path,
            diagnostic=request.diagnostic,
            first=request.first,
            last=request.last,
            old=old,
            new=new,
            title=f"AI fix (lsp-agent): {request.diagnostic.message.strip().splitlines()[0][:80]}",
        )
        if _anchor(suggestion, doc.text) is None:
            return  # the region changed meanwhile: the fix no longer applies
        doc.suggestions.append(suggestion)
        self.on_ready(suggestion)

    def _schedule_soon(self) -> None:
        with contextlib.suppress(RuntimeError):  # loop closing
            asyncio.get_running_loop().call_soon(self._schedule)


def _anchor(suggestion: Suggestion, text: str) -> tuple[int, int] | None:
    """Where the suggestion's region is in ``text`` now: its original lines if they still hold
    ``old``, else the nearest other place holding exactly ``old``; ``None`` when nowhere."""
    lines = split_lines(text)
    span = suggestion.last - suggestion.first + 1
    old_lines = suggestion.old.split("\n")

    def holds(first: int) -> bool:
        return lines[first : first + span] == old_lines

    if holds(suggestion.first):
        return suggestion.first, suggestion.last
    candidates = [i for i in range(0, len(lines) - span + 1) if holds(i)]
    if not candidates:
        return None
    best = min(candidates, key=lambda i: abs(i - suggestion.first))
    return best, best + span - 1


_FENCE = re.compile(r"```[^\n]*\n(.*?)\n?```", re.DOTALL)


def parse_fix_reply(reply: str) -> str | None:
    """The replacement text in the first fenced code block of ``reply`` (``None``: none)."""
    match = _FENCE.search(reply)
    return match.group(1) if match is not None else None


def fix_request_text(request: FixRequest) -> str:
    """The user message asking a model for the fix."""
    lines = split_lines(request.text)
    numbered = "\n".join(f"{i + 1:6}\t{line}" for i, line in enumerate(lines))
    d = request.diagnostic
    label = " ".join(part for part in (d.source, d.code) if part)
    return (
        f"File {request.path} has this error at line {d.line + 1}, column "
        f"{d.range.start.character + 1} [{label}]: {d.message}\n\n"
        f"The whole file, numbered:\n{numbered}\n\n"
        f"Reply with the corrected text of lines {request.first + 1}-{request.last + 1} only, "
        "in one fenced code block, without line numbers. Fix only this error; change nothing "
        "else. If you cannot fix it with confidence, reply with no code block."
    )


SUGGEST_SYSTEM = (
    "You propose minimal fixes for single compiler or linter errors. You reply with the "
    "corrected lines in one fenced code block, nothing else."
)


def model_fix(*, model: Model, model_name: str, max_tokens: int = 2048) -> Compute:
    """A ``compute`` that asks ``model`` (one request, no tools)."""

    async def compute(request: FixRequest) -> str | None:
        model_request = ModelRequest(
            model=model_name,
            system=(SUGGEST_SYSTEM,),
            messages=(Message.user_text(fix_request_text(request)),),
            max_tokens=max_tokens,
        )
        reply = ""
        try:
            async for event in model.stream(model_request):
                if isinstance(event, ResponseDone):
                    reply = event.response.message().text()
        except ModelError as exc:
            logger.info("fix suggestion request failed: %s", exc)
            return None
        return parse_fix_reply(reply)

    return compute
