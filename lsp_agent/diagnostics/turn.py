"""Verification inside one agent turn: what the agent loop calls.

The loop makes one :class:`TurnVerification` per prompt (:meth:`TurnVerification.start`; it is
``None`` when verification is off or the session has no diagnostics service). It opens the
journal of the session's workspace, which records every change the turn applies. After each
batch of tool calls the loop calls :meth:`TurnVerification.after_batch`: when the batch changed
documents it shows a check (the ``started`` update at once), waits (bounded) for the verdict,
shows it, and returns the :class:`CheckResult` whose attachment goes into the next request.
When the model ends its turn the loop calls :meth:`TurnVerification.at_end`, which re-checks
files whose sources were unknown and, in ``fix`` mode, returns one nudge per round (at most
``maxRounds``) while new errors remain. Updates leave through the ``emit`` the turn gives it,
the session's one channel.

The verdict goes to clients as a tool call of kind ``think`` (id ``verify_<n>``): every ACP
client can show it, and its ``rawOutput.verification`` holds the structured verdict. Its title
is the one-line verdict for people; the model-facing attachment is never its content (clients
show a tool call's content, and the attachment is written for the model). The end-of-turn
re-check updates the tool call of the check it repeats, so a client shows each verdict once.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.diagnostics.config import VerifyConfig
from lsp_agent.diagnostics.model import Report
from lsp_agent.diagnostics.render import (
    display_path,
    render_attachment,
    render_nudge,
    summary_title,
    verdict_json,
)
from lsp_agent.diagnostics.service import DiagnosticsService
from lsp_agent.diagnostics.verify import FileVerdict, Target, Verdict
from lsp_agent.protocol.documents import TextSnapshot
from lsp_agent.protocol.events import SessionUpdate, ToolCall, ToolCallUpdate
from lsp_agent.workspace.journal import AppliedChange, ChangeJournal
from lsp_agent.workspace.workspace import Workspace


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    """``attachment`` goes after the tool results in the next request (``None``: nothing to
    say); ``update`` completes the verification tool call."""

    attachment: str | None
    update: ToolCallUpdate
    verdict: Verdict


@dataclass(kw_only=True)
class Check:
    """One pending verification (see the module docstring)."""

    turn: TurnVerification
    targets: tuple[Target, ...]
    started: ToolCall

    async def run(self) -> CheckResult:
        """Wait for the verdict (at most ``timeoutMs``); never raises for source problems."""
        turn = self.turn
        verdict = await turn.service.verifier.verify(
            self.targets, config=turn.config, baselines=turn.baselines, previous=turn.latest
        )
        for file in verdict.files:
            if file.sources:
                turn.latest[file.target.path] = file
                turn.checked_by[file.target.path] = self.started.tool_call_id
        attachment = render_attachment(verdict, cwd=turn.cwd, max_listed=turn.config.max_listed)
        return CheckResult(
            attachment=attachment,
            update=_finished(self.started.tool_call_id, verdict, turn.cwd),
            verdict=verdict,
        )


@dataclass(kw_only=True)
class TurnVerification:
    """Verification state of one prompt; see the module docstring."""

    service: DiagnosticsService
    config: VerifyConfig
    cwd: Path
    workspace: Workspace
    journal: ChangeJournal
    emit: Callable[[SessionUpdate], None]
    """Sends the verification's updates (a ``think`` tool call) to the session's user."""
    baselines: dict[tuple[Path, str], Report] = field(default_factory=dict)
    bases: dict[Path, TextSnapshot | None] = field(default_factory=dict)
    latest: dict[Path, FileVerdict] = field(default_factory=dict)
    checked_by: dict[Path, str] = field(default_factory=dict)
    """The verification tool call that gave each file its latest verdict."""
    rounds: int = 0
    _ids: itertools.count[int] = field(default_factory=itertools.count)
    _prefix: str = field(default_factory=lambda: uuid.uuid4().hex[:8])

    @classmethod
    def start(
        cls,
        *,
        diagnostics: DiagnosticsService | None,
        config: VerifyConfig,
        cwd: Path,
        workspace: Workspace,
        emit: Callable[[SessionUpdate], None],
    ) -> TurnVerification | None:
        """Begin verifying a turn: ``None`` when ``config.mode`` is ``off`` or there is no
        diagnostics service. Opens a journal on ``workspace`` (the session's), so edits made by
        this turn's tool calls are recorded."""
        if diagnostics is None or config.mode == "off":
            return None
        journal = ChangeJournal()
        workspace.journal = journal
        return cls(
            service=diagnostics,
            config=config,
            cwd=cwd,
            workspace=workspace,
            journal=journal,
            emit=emit,
        )

    def close(self) -> None:
        """The turn is over: later applies are not recorded."""
        if self.workspace.journal is self.journal:
            self.workspace.journal = None

    async def after_batch(self) -> CheckResult | None:
        """For the loop, after a batch of tool calls: checks the documents it changed, showing
        the check to the user through ``emit``; its result (``attachment`` is the text for the
        next request), or ``None`` when the batch changed nothing that has sources."""
        check = self.begin()
        if check is None:
            return None
        self.emit(check.started)
        result = await check.run()
        self.emit(result.update)
        return result

    async def at_end(self) -> str | None:
        """For the loop, when the model ends its turn: re-checks files whose sources were
        unknown (shown through ``emit``); then, in ``fix`` mode while new errors remain and
        rounds are left, the nudge text (the loop sends it and goes on), else ``None``."""
        incomplete = tuple(f.target for f in self.latest.values() if f.unknown)
        if incomplete:
            names = ", ".join(display_path(t.path, self.cwd) for t in incomplete[:3])
            title = f"Re-checking diagnostics of {names}"
            earlier = {self.checked_by.get(t.path) for t in incomplete}
            repeated = earlier.pop() if len(earlier) == 1 else None
            if repeated is not None:
                # The verdict being repeated is updated in place: shown once, with the outcome.
                started = ToolCall(
                    tool_call_id=repeated, title=title, kind="think", status="in_progress"
                )
                self.emit(ToolCallUpdate(tool_call_id=repeated, title=title, status="in_progress"))
            else:
                started = ToolCall(
                    tool_call_id=f"verify_{self._prefix}_{next(self._ids)}",
                    title=title,
                    kind="think",
                    status="in_progress",
                )
                self.emit(started)
            check = Check(turn=self, targets=incomplete, started=started)
            result = await check.run()
            self.emit(result.update)
        return self.nudge()

    def nudge(self) -> str | None:
        """The fix nudge, counting a round, or ``None`` (not ``fix`` mode, no rounds left, or
        no new errors in the latest verdicts)."""
        if self.config.mode != "fix" or self.rounds >= self.config.max_rounds:
            return None
        failing = [f for f in self.latest.values() if f.new_errors]
        if not failing:
            return None
        self.rounds += 1
        return render_nudge(failing, cwd=self.cwd, max_listed=self.config.max_listed)

    def begin(self) -> Check | None:
        """A check of the documents changed since the last call, or ``None`` when none was."""
        changes = self.journal.take()
        if not changes:
            return None
        targets = self._targets(changes)
        if not any(self._has_sources(t) for t in targets):
            return None
        names = ", ".join(display_path(t.path, self.cwd) for t in targets[:3])
        started = ToolCall(
            tool_call_id=f"verify_{self._prefix}_{next(self._ids)}",
            title=f"Checking diagnostics of {names}",
            kind="think",
            status="in_progress",
        )
        return Check(turn=self, targets=targets, started=started)

    def _has_sources(self, target: Target) -> bool:
        servers, editor = self.service.verifier.expected(target, self.config)
        return bool(servers) or editor

    def _targets(self, changes: list[AppliedChange]) -> tuple[Target, ...]:
        last: dict[Path, AppliedChange] = {}
        for change in changes:
            self.bases.setdefault(change.path, change.base)
            last[change.path] = change
        targets = []
        for path, change in last.items():
            base = self.bases[path]
            new = change.new
            targets.append(
                Target(
                    path=path,
                    text=new.text,
                    digest=new.digest,
                    version=new.version if new.source == "buffer" else None,
                    since=change.at,
                    base_text=base.text if base is not None else None,
                    base_digest=base.digest if base is not None else None,
                    base_version=base.version if base is not None else None,
                )
            )
        return tuple(targets)


def _finished(tool_call_id: str, verdict: Verdict, cwd: Path) -> ToolCallUpdate:
    return ToolCallUpdate(
        tool_call_id=tool_call_id,
        title=summary_title(verdict, cwd=cwd),
        status="completed",
        raw_output={"verification": verdict_json(verdict)},
    )
