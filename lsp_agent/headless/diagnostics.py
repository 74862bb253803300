"""``lsp-agent run --diagnostics FILE``: the run verifies its edits with managed language servers.

``FILE`` holds the object the LSP door takes as ``initializationOptions.lspAgent.diagnostics``
(``verify``, ``servers``, ...; schema in :mod:`lsp_agent.diagnostics.config`, documented in
docs/verification.md). The run then works as the LSP door does: the composition root
(:func:`lsp_agent.sessions.compose.build_sessions`) gets one
:class:`~lsp_agent.diagnostics.service.DiagnosticsService` rooted at the run's directory, the
``LSP`` and ``Rename`` tools are added when servers are configured, and after each batch of
edits the next model request carries the ``<diagnostics-after-edit>`` report for the exact text
written. Suggestions (``suggestions``) are an editor feature and are ignored here.

Why a flag and not a settings key: managed servers are commands, so they come only from a file
the user names on the command line, never from whatever project the run happens to be in; and
Claude Code reports keys it does not know in ``.claude/settings.json`` as invalid settings (and
may skip the file), so an ``lspAgent`` key there would get in Claude Code's way.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from pathlib import Path

from lsp_agent.agent.env import AgentConfig
from lsp_agent.diagnostics.config import DiagnosticsSettings, SettingsError, parse_settings
from lsp_agent.diagnostics.service import DiagnosticsService

log = logging.getLogger(__name__)

SHUTDOWN_TIMEOUT_S = 2.0
"""How long each managed server may take to stop at the end of the run (seconds)."""


class DiagnosticsFileError(ValueError):
    """``--diagnostics FILE`` is unusable; the message names the file and the problem."""


def load_diagnostics_file(path: Path) -> DiagnosticsSettings:
    """Read and validate ``path`` (JSON object, the diagnostics settings).

    Raises :class:`DiagnosticsFileError`: ``--diagnostics d.json: diagnostics.verify.mode:
    Input should be 'off', 'report' or 'fix'``, or the file is missing / not JSON / not an
    object.
    """
    where = f"--diagnostics {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DiagnosticsFileError(f"{where}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise DiagnosticsFileError(f"{where}: not UTF-8 text") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DiagnosticsFileError(
            f"{where}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise DiagnosticsFileError(f"{where}: not valid JSON: nested too deeply") from None
    if not isinstance(raw, dict):
        raise DiagnosticsFileError(f"{where}: must hold a JSON object")
    try:
        return parse_settings(raw, where="diagnostics")
    except SettingsError as exc:
        raise DiagnosticsFileError(f"{where}: {exc}") from None


@dataclass(kw_only=True)
class HeadlessDiagnostics:
    """The verification parts of one run: settings and the service (managed servers start on
    first need and are stopped by :meth:`aclose`)."""

    settings: DiagnosticsSettings
    service: DiagnosticsService

    @classmethod
    def create(cls, *, settings: DiagnosticsSettings, cwd: Path) -> HeadlessDiagnostics:
        """A service rooted at ``cwd`` (the managed servers' workspace folder)."""
        if not settings.servers:
            log.warning("--diagnostics: no servers configured, so no edit can be verified")
        return cls(settings=settings, service=DiagnosticsService(settings=settings, roots=[cwd]))

    def agent_config(self, config: AgentConfig) -> AgentConfig:
        """``config`` with the file's ``verify`` settings."""
        return replace(config, verify=self.settings.verify)

    async def aclose(self) -> None:
        """Stop every managed server (``shutdown`` + ``exit``, then kill; bounded)."""
        await self.service.shutdown(timeout=SHUTDOWN_TIMEOUT_S)
