"""The context engine of one session: decides, before each model request, whether to clear old
tool results or compact, runs the summary request, and recovers from "prompt is too long".

Order (Claude Code: "clears older tool outputs first, then summarizes"): when the next request
would pass the threshold, old tool results are cleared (:mod:`lsp_agent.context.clearing`); if
that is not enough, the history is compacted (:mod:`lsp_agent.context.compaction`). The
summary request reuses the cached prefix (same system and tools, the instruction appended).
A summary that fails, is empty or is not smaller leaves the history as it was and says why;
after :data:`~lsp_agent.context.compaction.MAX_FAILED_IN_A_ROW` automatic compactions in a
row that do not get under the threshold, automatic compaction stops for the session and the
user is told (no thrashing).

The engine holds plain per-session state (:class:`ContextState`) and takes everything it needs
from the session as callables, so it knows neither sessions nor hooks nor the editor.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from lsp_agent.context.clearing import (
    FileState,
    ReadRecord,
    clear_results,
    plan_clearing,
)
from lsp_agent.context.compaction import (
    MAX_FAILED_IN_A_ROW,
    PROMPTS_FRACTION,
    SUMMARY_MAX_TOKENS,
    Boundary,
    CompactPolicy,
    Trigger,
    auto_threshold,
    compacted_history,
    drop_oldest,
    kept_prompts,
    newest_fitting,
    pairing_problems,
    summary_instruction,
    summary_problem,
    with_instruction,
)
from lsp_agent.context.early import EARLY_FRACTION, EarlySummary, Ready, tail_after
from lsp_agent.context.start import with_start
from lsp_agent.context.tokens import (
    Calibration,
    EstimateCache,
    Observed,
    estimate_messages,
    estimate_request,
    estimate_text,
    next_request_tokens,
)
from lsp_agent.model.anthropic_request import REQUEST_LIMIT_BYTES
from lsp_agent.model.background import BackgroundRequests, BackgroundResult
from lsp_agent.model.base import Model, ModelError
from lsp_agent.model.limits import ModelLimits
from lsp_agent.model.types import (
    Message,
    ModelRequest,
    ResponseDone,
    TextBlock,
    ToolSpec,
    Usage,
)

SUMMARY_RETRIES = 4
"""Times the summary request drops the oldest quarter of the history when even it is too long."""


class CompactionError(Exception):
    """Compaction did not happen; the message says why (for the user). The history is unchanged."""


def is_prompt_too_long(exc: ModelError) -> bool:
    """Whether the API refused a request because its prompt exceeds the context window (HTTP
    400 ``invalid_request_error`` "prompt is too long: N tokens > M maximum"). The request
    *byte* limit (HTTP 413) is a different error."""
    return exc.status == 400 and "prompt is too long" in str(exc).lower()


@dataclass(kw_only=True)
class ContextState:
    """What the engine remembers about one session (mutated by the session's event loop only).

    ``prompts``: the user's own messages, verbatim, oldest first (they survive compaction);
    ``observed``: the last exact
    prompt size the API reported; ``failed_in_a_row``: automatic compactions in a row that did
    not get under the threshold; ``boundaries``: every compaction so far.
    """

    prompts: list[str] = field(default_factory=list)
    calibration: Calibration = field(default_factory=Calibration)
    observed: Observed | None = None
    failed_in_a_row: int = 0
    auto_stopped: bool = False
    boundaries: list[Boundary] = field(default_factory=list)
    last_summary: str = ""
    summary_usage: Usage = field(default_factory=Usage)
    """Tokens the summary requests used (they are paid for like any other request)."""
    early: EarlySummary | None = None
    """The summary being prepared ahead of time (:mod:`lsp_agent.context.early`)."""
    estimates: EstimateCache = field(default_factory=EstimateCache)
    """Token estimates of the last request's messages and tools (counted once each)."""
    early_used: int = 0
    """Compactions that used a summary prepared ahead of time (no blocking request)."""
    dropped: int = 0
    """Oldest messages the last summary request left out so that it fit (0: none)."""

    def drop_early(self) -> None:
        """Cancel and forget the summary prepared ahead of time, if any."""
        if self.early is not None:
            self.early.cancel()
            self.early = None

    def reset(self) -> None:
        """Forget the conversation (``/clear``); the calibration is kept."""
        self.drop_early()
        self.prompts.clear()
        self.observed = None
        self.failed_in_a_row = 0
        self.auto_stopped = False
        self.boundaries.clear()
        self.last_summary = ""


PreCompact = Callable[[Trigger, str], Awaitable[str | None]]
"""Runs the PreCompact hooks: ``(trigger, custom_instructions)`` → a reason when they block."""

PostCompact = Callable[[Trigger, str], Awaitable[None]]
"""Runs what follows a compaction (PostCompact and SessionStart ``compact`` hooks)."""


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """What :meth:`ContextEngine.prepare` decided: the ``messages`` to send, the compaction it
    made (if any), tokens freed by clearing, and a ``notice`` for the user."""

    messages: tuple[Message, ...]
    boundary: Boundary | None = None
    summary: str = ""
    cleared: int = 0
    notice: str | None = None


@dataclass(kw_only=True)
class ContextEngine:
    """See the module doc. ``working_set()`` renders the deterministic working-set block from
    server state; ``start()`` the memory files, re-read, for the compacted history's start
    block (:mod:`lsp_agent.context.start`; ``None``: none); ``reads()`` what each ``Read``
    call saw, by ``tool_use_id``; ``file_state(path)`` a file's current version and digest."""

    model: Model
    model_name: str
    limits: ModelLimits
    state: ContextState
    policy: CompactPolicy = field(default_factory=CompactPolicy)
    environ: Mapping[str, str] = field(default_factory=dict)
    working_set: Callable[[], str] = lambda: ""
    start: Callable[[], str | None] = lambda: None
    reads: Callable[[], Mapping[str, ReadRecord]] = dict
    file_state: Callable[[str], FileState | None] | None = None
    pre_compact: PreCompact | None = None
    post_compact: PostCompact | None = None
    background: BackgroundRequests | None = None
    """Sends the summary ahead of time (``None`` or switched off: never)."""

    @property
    def window(self) -> int:
        """The model's context window (tokens)."""
        return self.limits.context_window

    def threshold(self, max_tokens: int) -> int:
        """Prompt size (tokens) above which a request with ``max_tokens`` triggers compaction."""
        return auto_threshold(window=self.window, max_tokens=max_tokens, environ=self.environ)

    def predict(
        self, *, system: Sequence[str], tools: Sequence[ToolSpec], messages: Sequence[Message]
    ) -> int:
        """Predicted prompt size of the next request (tokens)."""
        return next_request_tokens(
            system=system,
            tools=tools,
            messages=messages,
            observed=self.state.observed,
            calibration=self.state.calibration,
        )

    def observe(
        self,
        *,
        system: Sequence[str],
        tools: Sequence[ToolSpec],
        messages: Sequence[Message],
        usage: Usage,
    ) -> None:
        """Learn from a response: ``messages`` is what the request carried, ``usage`` what the
        API counted."""
        estimated = estimate_request(
            system=system, tools=tools, messages=messages, cache=self.state.estimates
        )
        self.state.calibration = self.state.calibration.observe(
            estimated=estimated, actual=usage.context_tokens
        )
        self.state.observed = Observed.from_usage(messages=len(messages), usage=usage)

    def clear(
        self, messages: Sequence[Message], *, force: bool = False
    ) -> tuple[int, tuple[Message, ...]]:
        """Clear old tool results (``force``: whatever is not protected, however little)."""
        plan = plan_clearing(messages, window=self.window, min_free_fraction=0.0 if force else 0.1)
        if not plan.ids:
            return 0, tuple(messages)
        self.state.observed = None  # the prefix changed: the last exact size no longer applies
        return plan.tokens, clear_results(
            messages, plan.ids, reads=self.reads(), file_state=self.file_state
        )

    async def prepare(
        self,
        *,
        system: Sequence[str],
        tools: Sequence[ToolSpec],
        messages: Sequence[Message],
        max_tokens: int,
    ) -> Prepared:
        """Before a request: clear, then compact, when the request would pass the threshold."""
        current = tuple(messages)
        threshold = self.threshold(max_tokens)
        predicted = self.predict(system=system, tools=tools, messages=current)
        if predicted <= threshold:
            if predicted >= threshold * EARLY_FRACTION:
                self._prepare_early(system=system, tools=tools, messages=current)
            return Prepared(messages=current)
        if not self.policy.auto or self.state.auto_stopped:
            return Prepared(messages=current)
        freed, current = self.clear(current)
        if self.predict(system=system, tools=tools, messages=current) <= threshold:
            return Prepared(messages=current, cleared=freed)
        ready = self._take_early(system=system, tools=tools, messages=current, limit=threshold)
        try:
            boundary, compacted = await self.compact(
                system=system,
                tools=tools,
                messages=current,
                trigger="auto",
                max_tokens=max_tokens,
                ready=ready,
            )
        except CompactionError as exc:
            failed = f"Automatic compaction failed: {exc}. The history is unchanged."
            stopped = self._note_failure()
            return Prepared(
                messages=current,
                cleared=freed,
                notice=failed if stopped is None else f"{failed}\n\n{stopped}",
            )
        notice: str | None = None
        if boundary.tokens_after > threshold:
            notice = self._note_failure()
        else:
            self.state.failed_in_a_row = 0
        notes = [n for n in (self.dropped_note(), notice) if n]
        return Prepared(
            messages=compacted,
            boundary=boundary,
            summary=self.state.last_summary,
            cleared=freed,
            notice="\n\n".join(notes) if notes else None,
        )

    def dropped_note(self) -> str | None:
        """What the user is told when the last summary left out the oldest messages."""
        if not self.state.dropped:
            return None
        return (
            f"The conversation was too large to summarise whole (the model's request size or "
            f"context window): its oldest {self.state.dropped} messages were dropped and only "
            "the newer part was summarised."
        )

    def _note_failure(self) -> str | None:
        """Count an automatic compaction that failed or did not get under the threshold; the
        notice when that stops automatic compaction for the session."""
        self.state.failed_in_a_row += 1
        if self.state.failed_in_a_row < MAX_FAILED_IN_A_ROW:
            return None
        self.state.auto_stopped = True
        return (
            f"Automatic compaction stopped: {MAX_FAILED_IN_A_ROW} attempts in a row failed or "
            "did not bring the conversation under the limit. Use /compact with a focus, or "
            "/clear to start over."
        )

    async def recover(
        self,
        *,
        system: Sequence[str],
        tools: Sequence[ToolSpec],
        messages: Sequence[Message],
        max_tokens: int,
    ) -> Prepared:
        """After a "prompt is too long" answer: clear whatever may go, then compact (trigger
        ``reactive``). Raises :class:`CompactionError` when that fails or is not allowed."""
        if not self.policy.manual:
            raise CompactionError("compaction is disabled (DISABLE_COMPACT)")
        freed, current = self.clear(messages, force=True)
        boundary, compacted = await self.compact(
            system=system, tools=tools, messages=current, trigger="reactive", max_tokens=max_tokens
        )
        return Prepared(
            messages=compacted,
            boundary=boundary,
            summary=self.state.last_summary,
            cleared=freed,
            notice=self.dropped_note(),
        )

    async def compact(
        self,
        *,
        system: Sequence[str],
        tools: Sequence[ToolSpec],
        messages: Sequence[Message],
        trigger: Trigger,
        max_tokens: int,
        focus: str = "",
        ready: Ready | None = None,
    ) -> tuple[Boundary, tuple[Message, ...]]:
        """Summarise ``messages`` and build the compacted history; with ``ready`` (a summary
        prepared ahead of time, :meth:`prepare`), use it and keep its tail verbatim instead of
        asking the model now. Raises :class:`CompactionError` (history unchanged) when a
        PreCompact hook blocks, the summary request fails, or the summary is empty or not
        smaller."""
        if not messages:
            raise CompactionError("there is nothing to compact yet")
        self.state.dropped = 0
        if ready is None:
            self.state.drop_early()  # the history it covers is about to be replaced
        if self.pre_compact is not None:
            blocked = await self.pre_compact(trigger, focus)
            if blocked is not None:
                raise CompactionError(f"a PreCompact hook blocked it: {blocked}")
        before = self.predict(system=system, tools=tools, messages=messages)
        if ready is not None:
            summary, tail, said = ready.summary, ready.tail, self.state.prompts[: ready.prompts]
        else:
            summary = await self._summarise(
                system=system, tools=tools, messages=messages, focus=focus
            )
            tail, said = (), self.state.prompts
            problem = summary_problem(summary, tokens_before=estimate_messages(messages))
            if problem is not None:
                raise CompactionError(problem)
        prompts, omitted = kept_prompts(said, budget=int(self.window * PROMPTS_FRACTION))
        working = self.working_set()
        new = compacted_history(
            summary=summary,
            working_set=working,
            prompts=prompts,
            omitted=omitted,
            mid_turn=trigger != "manual" and not tail,
        )
        new = with_start((*new, *tail), self.start())
        assert not pairing_problems(new)
        self.state.observed = None
        after = self.state.calibration.apply(
            estimate_request(system=system, tools=tools, messages=new)
        )
        boundary = Boundary(
            trigger=trigger,
            tokens_before=before,
            tokens_after=after,
            prompts_kept=len(prompts),
            files=working.count("<file "),
        )
        self.state.boundaries.append(boundary)
        if ready is not None:
            self.state.early_used += 1
        self.state.last_summary = summary
        if self.post_compact is not None:
            await self.post_compact(trigger, summary)
        return boundary, new

    def _prepare_early(
        self, *, system: Sequence[str], tools: Sequence[ToolSpec], messages: tuple[Message, ...]
    ) -> None:
        """Past :data:`~lsp_agent.context.early.EARLY_FRACTION` of the threshold: send the
        summary request for ``messages`` in the background, unless one already covers a
        prefix of them (running, ready, or failed: one attempt per compaction)."""
        if self.background is None or not self.policy.auto or self.state.auto_stopped:
            return
        early = self.state.early
        if early is not None and tail_after(early.covered, messages) is not None:
            return
        self.state.drop_early()
        request = ModelRequest(
            model=self.model_name,
            system=tuple(system),
            messages=with_instruction(messages, summary_instruction()),
            tools=tuple(tools),
            max_tokens=min(SUMMARY_MAX_TOKENS, self.limits.max_output_tokens),
        )

        def paid(result: BackgroundResult) -> None:
            self.state.summary_usage = self.state.summary_usage + result.usage

        task = self.background.start("summary", request, on_done=paid)
        if task is not None:
            self.state.early = EarlySummary(
                task=task, covered=messages, prompts=len(self.state.prompts)
            )

    def _take_early(
        self,
        *,
        system: Sequence[str],
        tools: Sequence[ToolSpec],
        messages: tuple[Message, ...],
        limit: int,
    ) -> Ready | None:
        """At the threshold: the summary prepared ahead of time when it is ready, covers a
        prefix of ``messages``, passes the checks of any summary, and leaves the history under
        ``limit`` tokens with its tail; ``None`` otherwise. The prepared summary is used once
        or dropped (cancelled when still running) either way."""
        early, self.state.early = self.state.early, None
        if early is None:
            return None
        early.cancel()
        text = early.text()
        tail = tail_after(early.covered, messages)
        if text is None or tail is None:
            return None
        if summary_problem(text, tokens_before=estimate_messages(early.covered)) is not None:
            return None
        estimate = estimate_request(
            system=system, tools=tools, messages=(Message.user_text(text), *tail)
        )
        if self.state.calibration.apply(estimate) > limit:
            return None
        return Ready(summary=text, tail=tail, covered=early.covered, prompts=early.prompts)

    async def _summarise(
        self,
        *,
        system: Sequence[str],
        tools: Sequence[ToolSpec],
        messages: Sequence[Message],
        focus: str,
    ) -> str:
        instruction = summary_instruction(focus)
        max_tokens = min(SUMMARY_MAX_TOKENS, self.limits.max_output_tokens)
        # A history over the request size limit or the window (a resumed session, a huge
        # paste) would be refused every time: summarise the newest part that fits.
        fixed = len(json.dumps([list(system), [t.model_dump(mode="json") for t in tools]]))
        history, self.state.dropped = newest_fitting(
            messages,
            max_bytes=int(REQUEST_LIMIT_BYTES * 0.9) - fixed - len(instruction) * 6,
            max_tokens=self.window
            - estimate_request(system=system, tools=tools, messages=())
            - estimate_text(instruction),
        )
        for attempt in range(SUMMARY_RETRIES + 1):
            request = ModelRequest(
                model=self.model_name,
                system=tuple(system),
                messages=with_instruction(history, instruction),
                tools=tuple(tools),
                max_tokens=max_tokens,
            )
            try:
                text, usage = await _text_of(self.model, request)
                self.state.summary_usage = self.state.summary_usage + usage
                return text
            except ModelError as exc:
                too_big = is_prompt_too_long(exc) or exc.status == 413
                if not too_big or attempt == SUMMARY_RETRIES:
                    raise CompactionError(f"the summary request failed: {exc}") from exc
                shorter = drop_oldest(history, max(1, len(history) // 4))
                if shorter == history:
                    raise CompactionError(f"the summary request failed: {exc}") from exc
                self.state.dropped += len(history) - len(shorter) + 1
                history = shorter
        raise AssertionError("unreachable")


async def _text_of(model: Model, request: ModelRequest) -> tuple[str, Usage]:
    """The text of a complete response to ``request`` (tool calls in it are ignored) and its
    usage."""
    stream = model.stream(request)
    try:
        async for event in stream:
            if isinstance(event, ResponseDone):
                text = "".join(b.text for b in event.response.content if isinstance(b, TextBlock))
                return text, event.response.usage
    finally:
        with contextlib.suppress(Exception):
            await stream.aclose()  # type: ignore[attr-defined]
    raise ModelError("the model stream ended without a complete response")
