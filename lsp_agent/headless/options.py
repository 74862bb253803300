"""The options of one headless run, as parsed from the command line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

OutputFormat = Literal["text", "json", "stream-json"]
"""``text``: the final answer; ``json``: one result object; ``stream-json``: JSON lines."""

InputFormat = Literal["text", "stream-json"]
"""``text``: the prompt; ``stream-json``: user messages as JSON lines on stdin."""


@dataclass(frozen=True, kw_only=True)
class HeadlessOptions:
    """Everything ``lsp-agent run`` was told.

    ``cwd`` is absolute and exists. ``allowed_tools``/``disallowed_tools`` are single permission
    rules in Claude Code's grammar (already split and checked). ``max_turns`` bounds the number
    of model requests of the turn (``None``: unbounded). ``model`` ``None`` means
    ``$ANTHROPIC_MODEL`` or the built-in default. The permission mode is a string here (not the
    core's ``PermissionMode``) so this module imports nothing from the core; ``None`` means
    ``permissions.defaultMode`` of the settings, else ``default``. ``settings_file`` is
    ``--settings FILE`` (absolute). ``trusted`` says whether the project's own settings and
    hooks apply (a headless run trusts its directory, as Claude Code's ``-p`` does).
    ``diagnostics_file`` is ``--diagnostics FILE`` (absolute): the diagnostics settings
    (verification, managed language servers) of the run; ``None``: no verification.
    ``mcp_configs`` are the ``--mcp-config`` values (files or JSON texts, Claude Code's
    ``{"mcpServers": ...}`` shape); with ``strict_mcp_config`` they are the only MCP servers.
    Sessions (Claude Code's flags): ``continue_session`` resumes the newest saved session of
    ``cwd``; ``resume`` a session by id (``""``: the newest); ``fork_session`` resumes into a
    new id; ``session_id`` names a new session; ``persist`` ``False`` writes no transcript.
    ``append_system_prompt`` is added to the system prompt; ``system_prompt`` replaces the
    built-in one. ``add_dirs`` are more roots of the session (absolute, existing).
    ``input_format`` ``stream-json`` reads the user messages from stdin (``prompt`` may then be
    empty); ``include_partial_messages`` adds the model's stream events to ``stream-json``.
    ``tools`` (``--tools``) names the built-in tools offered to the model (``None``: all;
    ``()``: none). ``max_budget_usd`` stops the run once its model requests cost more (list
    prices, :mod:`lsp_agent.model.pricing`).
    ``permission_mode`` ``dontAsk`` denies whatever would ask (as a headless run does anyway),
    also in a background run whose approvals the editor could otherwise answer.
    """

    prompt: str
    output_format: OutputFormat = "text"
    permission_mode: str | None = None
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    max_turns: int | None = None
    model: str | None = None
    cwd: Path
    verbose: bool = False
    settings_file: Path | None = None
    trusted: bool = True
    diagnostics_file: Path | None = None
    mcp_configs: tuple[str, ...] = ()
    strict_mcp_config: bool = False
    fallback_model: str | None = None
    """``--fallback-model``: the model to switch to when the model is overloaded."""
    continue_session: bool = False
    resume: str | None = None
    fork_session: bool = False
    session_id: str | None = None
    persist: bool = True
    append_system_prompt: str | None = None
    system_prompt: str | None = None
    add_dirs: tuple[Path, ...] = ()
    input_format: InputFormat = "text"
    include_partial_messages: bool = False
    approve_memory_imports: bool = False
    """``--approve-memory-imports``: memory files of the project may import files from outside
    it in this run (otherwise such imports are left out with a notice, as nobody can be asked)."""
    tools: tuple[str, ...] | None = None
    max_budget_usd: float | None = None
