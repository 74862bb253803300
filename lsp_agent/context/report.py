"""The ``/context`` breakdown: where the window's tokens go, by category (like Claude Code's).

Categories: system prompt, tool definitions, memory files, messages (of which tool results),
the reserve kept for compaction, and free space. Figures are chars/4 estimates scaled by the
session's :class:`~lsp_agent.context.tokens.Calibration`; when an exact total from the API's
``count_tokens`` is known it is shown too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lsp_agent.context.tokens import (
    Calibration,
    estimate_block,
    estimate_messages,
    estimate_text,
    estimate_tools,
)
from lsp_agent.model.types import Message, ToolResultBlock, ToolSpec


@dataclass(frozen=True, kw_only=True)
class ContextReport:
    """Token use by category (tokens). ``threshold`` is where automatic compaction starts;
    ``exact`` the API's count of the whole prompt when known."""

    model: str
    window: int
    threshold: int
    system: int
    tools: int
    memory: int
    messages: int
    tool_results: int
    exact: int | None = None

    @property
    def used(self) -> int:
        """Estimated prompt size (or the exact one when known)."""
        if self.exact is not None:
            return self.exact
        return self.system + self.tools + self.memory + self.messages

    @property
    def free(self) -> int:
        """Tokens left before the compaction threshold (never negative)."""
        return max(0, self.threshold - self.used)


def context_report(
    *,
    model: str,
    system: Sequence[str],
    memory: Sequence[str],
    tools: Sequence[ToolSpec],
    messages: Sequence[Message],
    window: int,
    threshold: int,
    calibration: Calibration,
    exact: int | None = None,
) -> ContextReport:
    """The breakdown of a session's next request. ``memory`` are the parts holding memory
    files (counted once, under memory, even when they also appear in ``system``)."""
    memory_set = set(memory)
    system_only = [p for p in system if p not in memory_set]
    results = sum(
        estimate_block(b) for m in messages for b in m.content if isinstance(b, ToolResultBlock)
    )
    scale = calibration.apply
    return ContextReport(
        model=model,
        window=window,
        threshold=threshold,
        system=scale(sum(estimate_text(p) for p in system_only)),
        tools=scale(estimate_tools(tools)),
        memory=scale(sum(estimate_text(p) for p in memory)),
        messages=scale(estimate_messages(messages)),
        tool_results=scale(results),
        exact=exact,
    )


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def _pct(tokens: int, window: int) -> str:
    return f"{100 * tokens / window:.1f}%" if window else "-"


def render_report(report: ContextReport) -> str:
    """The report as a Markdown table for the chat."""
    w = report.window
    rows = [
        ("System prompt", report.system),
        ("Tool definitions", report.tools),
        ("Memory files", report.memory),
        ("Messages", report.messages),
        ("  of which tool results", report.tool_results),
        ("Reserved (output + compaction buffer)", max(0, w - report.threshold)),
        ("Free before compaction", report.free),
    ]
    head = (
        f"**Context:** {report.model}, {_k(report.used)} of {_k(w)} tokens ({_pct(report.used, w)})"
    )
    if report.exact is not None:
        head += " (exact count from the API)"
    lines = [head, "", "| Category | Tokens | Share |", "| --- | ---: | ---: |"]
    lines += [f"| {name} | {_k(tokens)} | {_pct(tokens, w)} |" for name, tokens in rows]
    lines.append("")
    lines.append(f"Automatic compaction at {_k(report.threshold)} tokens.")
    return "\n".join(lines)
