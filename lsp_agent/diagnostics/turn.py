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

import dataclasses
import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.diagnostics.config import VerifyConfig
from lsp_agent.diagnostics.model import Report
from lsp_agent.diagnostics.positions import split_lines
from lsp_agent.diagnostics.render import (
    CLOSE_TAG,
    OPEN_TAG,
    display_path,
    render_attachment,
    render_nudge,
    summary_title,
    verdict_json,
)
from lsp_agent.diagnostics.service import DiagnosticsService
from lsp_agent.diagnostics.verify import FileVerdict, Target, Verdict
from lsp_agent.protocol.documents import TextSnapshot
from lsp_agent.protocol.events import (
    ContentItem,
    SessionUpdate,
    TextContent,
    ToolCall,
    ToolCallUpdate,
)
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
        shown, repeated = turn.unreported(verdict)
        attachment = render_attachment(shown, cwd=turn.cwd, max_listed=turn.config.max_listed)
        if attachment is not None and repeated:
            attachment = attachment.replace(
                CLOSE_TAG,
                f"  ({repeated} problem(s) reported before and not changed by this edit are "
                f"not listed again)\n{CLOSE_TAG}",
            )
        if turn.config.mode == "fix" and any(f.new_errors for f in shown.files):
            attachment = turn.fix_round(shown) or attachment
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
    """Fix rounds used, shared by the per-edit reports and the end-of-turn nudge."""
    asked: bool = False
    """A report or nudge of this prompt already listed new errors."""
    exhausted: bool = False
    """The ``maxRounds`` budget ran out while errors remained (the user is told at the end)."""
    told: set[tuple[Path, int, str, str | None, str, str]] = field(default_factory=set)
    """Diagnostics already listed to the model, with the text of their line then."""
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
        rounds are left, the nudge text (the loop sends it and goes on), else ``None`` (when
        the rounds ran out with errors left, the user is told "still failing")."""
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
        nudge = self.nudge()
        if nudge is not None:
            return nudge
        failing = [f for f in self.latest.values() if f.new_errors]
        if self.config.mode == "fix" and failing and (self.exhausted or self.rounds):
            self.emit(self._still_failing(failing))
        return None

    def nudge(self) -> str | None:
        """The fix nudge, counting a round, or ``None`` (not ``fix`` mode, no rounds left, or
        no new errors in the latest verdicts)."""
        if self.config.mode != "fix" or self.rounds >= self.config.max_rounds:
            return None
        failing = [f for f in self.latest.values() if f.new_errors]
        if not failing:
            return None
        self.rounds += 1
        self.asked = True
        return render_nudge(failing, cwd=self.cwd, max_listed=self.config.max_listed)

    def fix_round(self, shown: Verdict) -> str | None:
        """Count a per-edit report that lists new errors in ``fix`` mode: the first listing is
        free, each later one (the model is fixing what it was told) uses a round of the same
        ``maxRounds`` budget as the end-of-turn nudge. Returns the text that replaces the
        report once the budget is spent (it stops asking for fixes), else ``None``."""
        if not self.asked:
            self.asked = True
            return None
        if self.rounds < self.config.max_rounds:
            self.rounds += 1
            return None
        self.exhausted = True
        count = sum(len(f.new_errors) for f in shown.files)
        return (
            f"{OPEN_TAG}\nThe diagnostics still report {count} new error(s) after "
            f"{self.rounds} fix round(s); that is the limit for this prompt (maxRounds). Do not "
            "keep editing to chase them: finish your turn and tell the user which errors "
            f"remain.\n{CLOSE_TAG}"
        )

    def unreported(self, verdict: Verdict) -> tuple[Verdict, int]:
        """``verdict`` without the new diagnostics already listed to the model whose line an
        edit did not change since (same source, code, message and line text), and how many
        were left out; the rest are remembered as listed."""
        files = []
        repeated = 0
        for file in verdict.files:
            lines = split_lines(file.target.text)
            keep = []
            for diagnostic in file.new:
                text = lines[diagnostic.line].strip() if 0 <= diagnostic.line < len(lines) else ""
                key = (file.target.path, diagnostic.severity, *diagnostic.key(), text)
                if key in self.told:
                    repeated += 1
                    continue
                self.told.add(key)
                keep.append(diagnostic)
            files.append(dataclasses.replace(file, new=tuple(keep)))
        return dataclasses.replace(verdict, files=tuple(files)), repeated

    def _still_failing(self, failing: list[FileVerdict]) -> ToolCall:
        """The user's notice that ``fix`` mode gave up with errors left."""
        count = sum(len(f.new_errors) for f in failing)
        names = ", ".join(display_path(f.target.path, self.cwd) for f in failing[:3])
        text = (
            f"Still failing after {self.rounds} fix round(s): {count} new error(s) in {names} "
            "remain (verify.maxRounds reached)."
        )
        return ToolCall(
            tool_call_id=f"verify_{self._prefix}_{next(self._ids)}",
            title=text,
            kind="think",
            status="completed",
            content=(ContentItem(content=TextContent(text=text)),),
        )

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
