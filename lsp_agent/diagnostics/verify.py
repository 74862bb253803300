"""Verification after edits: wait for diagnostics of the exact texts the agent wrote, then
classify them against the text before the agent's edits.

The settle rule, per changed document (docs/verification.md has the long form):

1. The *expected sources* are the managed servers whose ``filetypes`` match the file, plus
   the editor bridge when the document is an editor buffer and the bridge has reported for it
   before. Sources disabled by a filter are left out.
2. Managed servers are given the new text (and, when no report for the text before the edit
   is known yet, that text first, so there is something to compare with).
3. A source *has reported* when the store holds a report from it computed for the new text
   (same digest, or same editor version); nothing older counts, ever.
4. The document is *settled* when every expected source has reported and, for sources that
   push (they may push again), no new report arrived for ``quietMs``.
5. Everything is capped at ``timeoutMs`` from the start of verification. A source that has
   not reported by then is *unknown* for this verdict, with the reason (did not report in
   time, could not start, the document changed meanwhile).

Classification (:mod:`lsp_agent.diagnostics.classify`) compares each source's new report with
its report for the text before the turn's first edit of the document; when that is not known
the diagnostics are listed as *uncompared* rather than guessed to be new.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lsp_agent.diagnostics.classify import classify
from lsp_agent.diagnostics.config import VerifyConfig
from lsp_agent.diagnostics.managed import ManagedServer, ServerUnavailableError
from lsp_agent.diagnostics.model import EDITOR_CHANNEL, SEVERITIES, Diagnostic, Report
from lsp_agent.diagnostics.store import DiagnosticsStore


@dataclass(frozen=True, kw_only=True)
class Target:
    """A document state to verify.

    ``text``/``digest`` are what the agent wrote; ``version`` is the editor version of that
    text when the document is an editor buffer (else ``None``); ``since`` is when it was
    applied (monotonic seconds). ``base_text``/``base_digest``/``base_version`` describe the
    text before the turn's first edit of the document (``base_text=None``: the agent created
    the file).
    """

    path: Path
    text: str
    digest: str
    version: int | None
    since: float
    base_text: str | None
    base_digest: str | None
    base_version: int | None


SourceStatus = Literal["checked", "unknown"]


@dataclass(frozen=True, kw_only=True)
class SourceOutcome:
    """What one source said about one target. ``reason`` explains an ``unknown``;
    ``baseline_known`` says whether its report for the text before the edit was available."""

    channel: str
    status: SourceStatus
    reason: str | None = None
    report: Report | None = None
    baseline_known: bool = False


@dataclass(frozen=True, kw_only=True)
class FileVerdict:
    """The verdict for one document, after severity and source filters.

    ``new``/``fixed``/``preexisting`` come from sources whose earlier report was known;
    ``uncompared`` are current diagnostics of sources without one.
    """

    target: Target
    sources: tuple[SourceOutcome, ...]
    new: tuple[Diagnostic, ...] = ()
    fixed: tuple[Diagnostic, ...] = ()
    preexisting: tuple[Diagnostic, ...] = ()
    uncompared: tuple[Diagnostic, ...] = ()

    @property
    def unknown(self) -> tuple[SourceOutcome, ...]:
        """Sources that did not report on this text."""
        return tuple(s for s in self.sources if s.status == "unknown")

    @property
    def checked(self) -> tuple[SourceOutcome, ...]:
        """Sources that reported on exactly this text."""
        return tuple(s for s in self.sources if s.status == "checked")

    @property
    def new_errors(self) -> tuple[Diagnostic, ...]:
        """New diagnostics of error severity."""
        return tuple(d for d in self.new if d.severity == 1)


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The verdict for one batch of edits; ``elapsed`` is in seconds."""

    files: tuple[FileVerdict, ...]
    elapsed: float

    @property
    def new_errors(self) -> int:
        """How many new errors all files have."""
        return sum(len(f.new_errors) for f in self.files)

    @property
    def complete(self) -> bool:
        """Whether every expected source reported on every file."""
        return all(not f.unknown for f in self.files)


BaselineCache = MutableMapping[tuple[Path, str], Report]
"""Reports for the text before a turn's first edit, by (path, channel), kept for the turn."""


class Verifier:
    """Runs the settle rule over a store and the managed servers (see the module docstring)."""

    def __init__(
        self,
        *,
        store: DiagnosticsStore,
        servers: Sequence[ManagedServer],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.servers = tuple(servers)
        self._clock = clock

    def expected(self, target: Target, config: VerifyConfig) -> tuple[list[ManagedServer], bool]:
        """The managed servers and whether the editor bridge are expected for ``target``."""
        servers = [s for s in self.servers if s.handles(target.path) and _enabled(config, s.name)]
        editor = (
            target.version is not None
            and EDITOR_CHANNEL in self.store.channels(target.path)
            and _enabled(config, EDITOR_CHANNEL)
        )
        return servers, editor

    async def verify(
        self,
        targets: Sequence[Target],
        *,
        config: VerifyConfig,
        baselines: BaselineCache,
        previous: Mapping[Path, FileVerdict] | None = None,
    ) -> Verdict:
        """Verify every target concurrently under one ``config.timeout_ms`` cap. Never raises
        for source problems (they become ``unknown`` outcomes).

        ``previous`` holds the last verdict of each document in this turn: new problems it
        reported that are gone now are listed as fixed too (classification itself is always
        against the text before the turn's first edit)."""
        started = self._clock()
        deadline = started + config.timeout_ms / 1000
        verdicts = await asyncio.gather(
            *(
                self._verify_one(
                    t,
                    deadline=deadline,
                    config=config,
                    baselines=baselines,
                    previous=(previous or {}).get(t.path),
                )
                for t in targets
            )
        )
        return Verdict(files=tuple(verdicts), elapsed=self._clock() - started)

    async def _verify_one(
        self,
        target: Target,
        *,
        deadline: float,
        config: VerifyConfig,
        baselines: BaselineCache,
        previous: FileVerdict | None,
    ) -> FileVerdict:
        servers, editor = self.expected(target, config)
        channels = [s.name for s in servers] + ([EDITOR_CHANNEL] if editor else [])
        if not channels:
            return FileVerdict(target=target, sources=())
        drives = {
            s.name: asyncio.ensure_future(self._drive(s, target, deadline, baselines))
            for s in servers
        }
        failures: dict[str, str] = {}
        try:
            await self._settle(
                target,
                channels=channels,
                drives=drives,
                failures=failures,
                deadline=deadline,
                config=config,
            )
        finally:
            for task in drives.values():
                task.cancel()
            await asyncio.gather(*drives.values(), return_exceptions=True)
        outcomes: list[SourceOutcome] = []
        for channel in channels:
            report = self.store.find(
                target.path,
                channel,
                digest=target.digest,
                version=target.version,
            )
            baseline = self._baseline(target, channel, baselines)
            if report is None:
                reason = failures.get(channel) or self._why_missing(target, channel, config)
                outcomes.append(
                    SourceOutcome(
                        channel=channel,
                        status="unknown",
                        reason=reason,
                        baseline_known=baseline is not None,
                    )
                )
            else:
                outcomes.append(
                    SourceOutcome(
                        channel=channel,
                        status="checked",
                        report=report,
                        baseline_known=baseline is not None or target.base_text is None,
                    )
                )
        return self._classify(target, outcomes, baselines, config, previous)

    async def _drive(
        self, server: ManagedServer, target: Target, deadline: float, baselines: BaselineCache
    ) -> None:
        """Give ``server`` the text before the edit (when its report is unknown) and then the
        new text; pull servers are asked for their reports here."""
        path = target.path
        if target.base_text is not None and self._baseline(target, server.name, baselines) is None:
            budget = (deadline - self._clock()) / 2
            # An unavailable server fails the drive now; a slow baseline only leaves it unknown.
            with contextlib.suppress(TimeoutError):
                await server.analyze(path, target.base_text, timeout=budget)
                if not server.pull:
                    await self._wait_for(
                        path,
                        server.name,
                        digest=target.base_digest,
                        version=None,
                        until=self._clock() + budget,
                    )
            self._baseline(target, server.name, baselines)
        await server.analyze(path, target.text, timeout=max(deadline - self._clock(), 0.0))

    def _baseline(self, target: Target, channel: str, baselines: BaselineCache) -> Report | None:
        key = (target.path, channel)
        cached = baselines.get(key)
        if cached is not None:
            return cached
        if target.base_text is None:
            return None
        found = self.store.find(
            target.path,
            channel,
            digest=target.base_digest,
            version=target.base_version if channel == EDITOR_CHANNEL else None,
        )
        if found is not None:
            baselines[key] = found
        return found

    async def _wait_for(
        self,
        path: Path,
        channel: str,
        *,
        digest: str | None,
        version: int | None,
        until: float,
    ) -> Report | None:
        with self.store.watch([path]) as event:
            while True:
                found = self.store.find(path, channel, digest=digest, version=version)
                if found is not None:
                    return found
                remaining = until - self._clock()
                if remaining <= 0:
                    return None
                event.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        await event.wait()

    async def _settle(
        self,
        target: Target,
        *,
        channels: Sequence[str],
        drives: Mapping[str, asyncio.Task[None]],
        failures: dict[str, str],
        deadline: float,
        config: VerifyConfig,
    ) -> None:
        quiet = config.quiet_ms / 1000
        with self.store.watch([target.path]) as event:
            while True:
                now = self._clock()
                for name, task in drives.items():
                    if task.done() and name not in failures:
                        problem = _task_problem(task)
                        if problem is not None:
                            failures[name] = problem
                pending = False
                quiet_until = now
                for channel in channels:
                    report = self.store.find(
                        target.path,
                        channel,
                        digest=target.digest,
                        version=target.version,
                    )
                    if report is None:
                        pending = pending or channel not in failures
                    elif not report.final:
                        quiet_until = max(quiet_until, report.received + quiet)
                if (not pending and quiet_until <= now) or now >= deadline:
                    return
                wake = min(deadline, quiet_until) if not pending else deadline
                event.clear()
                wakeup = asyncio.ensure_future(event.wait())
                waiters: set[asyncio.Future[Any]] = {wakeup}
                waiters.update(t for t in drives.values() if not t.done())
                try:
                    await asyncio.wait(
                        waiters, timeout=max(wake - now, 0.0), return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    wakeup.cancel()

    def _why_missing(self, target: Target, channel: str, config: VerifyConfig) -> str:
        if channel == EDITOR_CHANNEL:
            current = self.store.editor_version(target.path)
            if current is not None and target.version is not None and current > target.version:
                return (
                    f"the document changed (version {current}) before the editor reported on "
                    f"version {target.version}"
                )
        else:
            server = next((s for s in self.servers if s.name == channel), None)
            if server is not None and server.state == "running":
                synced = server.synced_digest(target.path)
                if synced is not None and synced != target.digest:
                    return "the document changed before it reported on the agent's text"
        return f"did not report on this version within {config.timeout_ms} ms"

    def _classify(
        self,
        target: Target,
        outcomes: Sequence[SourceOutcome],
        baselines: BaselineCache,
        config: VerifyConfig,
        previous: FileVerdict | None,
    ) -> FileVerdict:
        new: list[Diagnostic] = []
        fixed: list[Diagnostic] = []
        pre: list[Diagnostic] = []
        uncompared: list[Diagnostic] = []
        for outcome in outcomes:
            if outcome.report is None:
                continue
            after = _filtered(outcome.report.diagnostics, outcome.channel, config)
            fixed.extend(_resolved(previous, outcome.channel, after, target.text))
            if target.base_text is None:
                new.extend(after)
                continue
            baseline = self._baseline(target, outcome.channel, baselines)
            if baseline is None:
                uncompared.extend(after)
                continue
            result = classify(
                before=_filtered(baseline.diagnostics, outcome.channel, config),
                after=after,
                old_text=target.base_text,
                new_text=target.text,
            )
            new.extend(result.new)
            fixed.extend(d for d in result.fixed if d not in fixed)
            pre.extend(result.preexisting)

        def order(items: list[Diagnostic]) -> tuple[Diagnostic, ...]:
            return tuple(sorted(items, key=lambda d: (d.severity, d.range.start, d.source)))

        return FileVerdict(
            target=target,
            sources=tuple(outcomes),
            new=order(new),
            fixed=order(fixed),
            preexisting=order(pre),
            uncompared=order(uncompared),
        )


def _resolved(
    previous: FileVerdict | None, channel: str, after: Sequence[Diagnostic], text: str
) -> list[Diagnostic]:
    """New problems of ``channel`` in the previous verdict of this turn that are gone now."""
    if previous is None:
        return []
    report = next(
        (o.report for o in previous.sources if o.channel == channel and o.report is not None),
        None,
    )
    if report is None:
        return []
    earlier = [d for d in previous.new if d in report.diagnostics]
    if not earlier:
        return []
    return list(
        classify(before=earlier, after=after, old_text=previous.target.text, new_text=text).fixed
    )


def _enabled(config: VerifyConfig, channel: str) -> bool:
    rule = config.sources.get(channel)
    return rule is None or rule.enabled


def _filtered(
    diagnostics: Sequence[Diagnostic], channel: str, config: VerifyConfig
) -> list[Diagnostic]:
    kept: list[Diagnostic] = []
    for diagnostic in diagnostics:
        rule = config.filter_for(channel, diagnostic.source)
        if rule is not None and not rule.enabled:
            continue
        threshold = SEVERITIES[
            rule.min_severity if rule is not None and rule.min_severity else config.min_severity
        ]
        if diagnostic.severity > threshold:
            continue
        if (
            rule is not None
            and diagnostic.code is not None
            and diagnostic.code in rule.ignore_codes
        ):
            continue
        kept.append(diagnostic)
    return kept


def _task_problem(task: asyncio.Task[None]) -> str | None:
    if task.cancelled():
        return None
    exc = task.exception()
    if exc is None:
        return None
    if isinstance(exc, ServerUnavailableError):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return "did not answer in time"
    return f"failed: {type(exc).__name__}: {exc}"
