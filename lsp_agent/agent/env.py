"""What one turn needs, in one place: :class:`AgentConfig` (the server's agent settings) and
:class:`TurnEnv` (the model, the session's tools, permission engine and hooks, and the
:class:`~lsp_agent.tools.base.ToolContext` every tool call gets), and :class:`ExecutorEnv`, the
part of it the tool executor reads.

The loop and the executor read everything from a :class:`TurnEnv` handed to them as a
parameter; nothing reaches them through context variables or attribute discovery.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.context.engine import ContextEngine
from lsp_agent.diagnostics.config import VerifyConfig
from lsp_agent.hooks.runner import HookRunner
from lsp_agent.model.base import Model
from lsp_agent.model.limits import DEFAULT_MODEL
from lsp_agent.model.types import Message
from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.protocol.permissions import PermissionMode, PermissionRequest, Refusal
from lsp_agent.tools.base import ToolContext
from lsp_agent.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from lsp_agent.agent.loop import LoopState


DEFAULT_MAX_MODEL_REQUESTS = 200
"""The per-prompt cap on model requests when a door sets none: generous for real work, but no
loop of any kind (a fix loop against diagnostics that never settle, a model that never stops
calling tools) runs unbounded."""


Unattended = Callable[[str, PermissionRequest], Refusal | None]
"""A door's answer when nobody at the door can answer a permission prompt (a non-interactive
run): given the tool's name and the request, the refusal in the door's own words (the prompt is
then never shown and no Notification hook runs), or ``None`` when the door's host asks someone
else after all (a background run asks the user's editor)."""


@dataclass(frozen=True, kw_only=True)
class ExecutorEnv:
    """What the executor needs: the turn's tools, the session's permission engine and hooks,
    the context every call gets (session id, workspace and host, diagnostics, emit), and the
    door's :data:`Unattended` answer when nobody can answer a prompt."""

    tools: ToolRegistry
    permissions: PermissionEngine
    ctx: ToolContext
    hooks: HookRunner | None = None
    unattended: Unattended | None = None
    results_dir: Path | None = None
    """The session's folder: oversized tool results are saved under it (``None``: they are
    only cut to their head and tail)."""


@dataclass(frozen=True, kw_only=True)
class AgentConfig:
    """The agent settings a door hands to the composition root (door-neutral).

    ``max_tokens`` is the output cap per request (tokens); after a ``max_tokens`` stop the
    request is retried once with ``escalated_max_tokens``, then up to ``max_continue_nudges``
    "continue" messages are sent. ``max_turns`` bounds model requests per prompt (default
    :data:`DEFAULT_MAX_MODEL_REQUESTS`; ``None`` removes the bound).
    ``context_window`` (tokens) overrides the model table's window (tests, odd
    deployments); ``None`` takes it from :func:`~lsp_agent.model.limits.limits_for`.
    ``auto_compact`` is the ``autoCompact`` setting (``None``: not set, on). ``state_dir``
    holds the sessions' folders (oversized tool results); ``None``: the user state directory.
    ``persist`` writes each session's transcript under ``data_dir`` (``None``: the
    ``LSP_AGENT_DATA_DIR`` environment variable, else the user data folder); transcripts
    untouched for ``retention_days`` days are deleted (``0``: kept forever).
    ``verify`` configures the check of the agent's edits against diagnostics
    (docs/verification.md); it needs a diagnostics service. ``unattended`` is set by a door
    where nobody can answer a permission prompt: the refusal, in the door's words, given
    instead of asking. ``append_system_prompt`` is added to the system prompt;
    ``system_prompt`` replaces the built-in one (``--system-prompt``; memory files still apply).
    ``tools`` names the built-in tools offered to the model (``None``: all of them; ``()``:
    none; Claude Code's ``--tools``). ``budget_spent`` is asked before every model request;
    a message means the door's spending limit is reached and the turn ends with it
    (``terminal="max_budget"``; ``run -p --max-budget-usd``).
    """

    model: str = DEFAULT_MODEL
    permission_mode: PermissionMode = "default"
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    max_turns: int | None = DEFAULT_MAX_MODEL_REQUESTS
    max_tokens: int = 16384
    escalated_max_tokens: int = 64000
    max_continue_nudges: int = 3
    context_window: int | None = None
    auto_compact: bool | None = None
    state_dir: Path | None = None
    persist: bool = True
    data_dir: Path | None = None
    retention_days: float = 30
    unattended: Unattended | None = None
    append_system_prompt: str | None = None
    system_prompt: str | None = None
    verify: VerifyConfig = dataclasses.field(default_factory=VerifyConfig)
    tools: tuple[str, ...] | None = None
    budget_spent: Callable[[], str | None] | None = None


@dataclass(frozen=True, kw_only=True)
class TurnEnv:
    """What one run of the loop needs.

    ``system`` and ``tools`` are this turn's (built-ins, then MCP tools). ``ctx`` is the
    context every tool call gets: the session id, the workspace and through it the door's
    host, the diagnostics service and ``emit``, the one channel updates leave by.
    ``commit`` stores each new message list in the session; ``aborted`` is called with the
    last state when the turn is cancelled (usage of finished requests). ``context`` and
    ``results_dir`` are the session's context engine and folder.
    """

    model: Model
    config: AgentConfig
    system: tuple[str, ...]
    tools: ToolRegistry
    permissions: PermissionEngine
    ctx: ToolContext
    commit: Callable[[tuple[Message, ...]], None]
    hooks: HookRunner | None = None
    aborted: Callable[[LoopState], None] | None = None
    instructions: (
        Callable[[tuple[tuple[str, dict[str, Any], str | None], ...]], str | None] | None
    ) = None
    """Given the finished tool calls of a batch (name, input, result text or ``None`` when the
    call failed), the text of memory files they bring in (a subfolder's CLAUDE.md, rules whose
    ``paths:`` match), appended after their results so the cached prefix stays intact."""
    rewrite: Callable[[tuple[Message, ...]], tuple[Message, ...]] | None = None
    """Given the history right after a batch's results were added, the history the next
    request of the same turn sends (memory files that stopped applying taken out); returning
    ``messages`` itself changes nothing. ``None``: never rewritten mid-turn."""
    context: ContextEngine | None = None
    """Clears and compacts the history before requests that would not fit; recovers from
    "prompt is too long" (see :mod:`lsp_agent.context.engine`). ``None``: never."""
    results_dir: Path | None = None
    """The session's folder: oversized tool results are saved under it (``None``: they are
    only cut to their head and tail)."""

    @property
    def executor(self) -> ExecutorEnv:
        """The part of this environment the tool executor reads."""
        return ExecutorEnv(
            tools=self.tools,
            permissions=self.permissions,
            ctx=self.ctx,
            hooks=self.hooks,
            unattended=self.config.unattended,
            results_dir=self.results_dir,
        )
