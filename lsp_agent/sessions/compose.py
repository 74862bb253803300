"""The composition root: the one place a door's parts become a working core.

Every door (the LSP server, ``run -p``, later ACP and subagents) builds its sessions with
:func:`build_sessions`, from door-neutral parts: the :class:`~lsp_agent.protocol.host.Host` it
implements, a model factory, the agent settings (:class:`~lsp_agent.agent.env.AgentConfig`,
which carries the verification settings), and optionally the diagnostics service, the settings
stores and the MCP services it keeps. Nothing below the doors knows which door it serves; a
door differs only in the parts it hands in.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.agent.env import AgentConfig
from lsp_agent.context.memory.approvals import ImportApprovals
from lsp_agent.mcp.service import McpService
from lsp_agent.model.base import Model
from lsp_agent.protocol.host import Host
from lsp_agent.sessions.manager import SessionManager, SettingsFactory
from lsp_agent.sessions.project_mode import ModeApprovals
from lsp_agent.sessions.resume import prune
from lsp_agent.store.paths import data_dir
from lsp_agent.tools.base import Tool
from lsp_agent.tools.registry import ToolRegistry, default_tools

if TYPE_CHECKING:
    from lsp_agent.diagnostics.service import DiagnosticsService


def build_sessions(
    *,
    host: Host,
    model_factory: Callable[[], Model],
    config: AgentConfig,
    diagnostics: DiagnosticsService | None = None,
    settings: SettingsFactory | None = None,
    mcp: Callable[[Path], McpService | None] | None = None,
    import_approvals: ImportApprovals | None = None,
    mode_approvals: ModeApprovals | None = None,
) -> SessionManager:
    """The session manager of a door.

    ``host`` is the door's host, used as it is (every session's workspace records its own
    changes, so no wrapper is needed). ``diagnostics`` (``None``: the door has none) is given
    to every session: verification of its edits as ``config.verify`` says, and the ``LSP`` and
    ``Rename`` tools when it manages language servers. ``settings`` and ``mcp`` return the
    settings store and the MCP service of a project directory (see :class:`SessionManager`).
    ``import_approvals`` remembers the user's answers about memory imports from outside the
    workspace (default: for this process only); ``mode_approvals`` the user's confirmations of
    a repository's ``defaultMode`` (:mod:`lsp_agent.sessions.project_mode`; default: for this
    process only). Transcripts older than ``config.retention_days`` are deleted here, once per
    door. Checkpoints go to the user data folder's ``checkpoints`` folder
    (:func:`~lsp_agent.store.paths.data_dir`).
    """
    manager = SessionManager(
        host=host,
        model_factory=model_factory,
        config=config,
        tools_factory=lambda: session_tools(diagnostics, only=config.tools),
        settings=settings,
        mcp=mcp,
        diagnostics=diagnostics,
        import_approvals=import_approvals,
        mode_approvals=mode_approvals,
        checkpoints_dir=data_dir(config.data_dir) / "checkpoints",
    )
    prune(manager)
    return manager


def session_tools(
    diagnostics: DiagnosticsService | None, *, only: tuple[str, ...] | None = None
) -> ToolRegistry:
    """The built-in tools, plus ``LSP`` and ``Rename`` when ``diagnostics`` has managed
    language servers configured; with ``only``, just the tools it names (offer order kept;
    unknown names are ignored here, the door reports them)."""
    tools: list[Tool[Any, Any]] = list(default_tools())
    if diagnostics is not None and diagnostics.settings.servers:
        from lsp_agent.tools.lsp_tools import lsp_tools  # only with managed language servers

        tools += lsp_tools()
    if only is not None:
        tools = [tool for tool in tools if tool.name in only]
    return ToolRegistry(tools=tools)
