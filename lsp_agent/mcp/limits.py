"""Time and size limits of the MCP client, from the environment (Claude Code's variables).

``MCP_TIMEOUT``            start-up timeout of one server, milliseconds (default 30 000)
``MCP_TOOL_TIMEOUT``       timeout of one tool call, milliseconds (default 600 000, 10 min)
``MAX_MCP_OUTPUT_TOKENS``  cap on one tool result, tokens (default 25 000; a warning is
                           logged from 10 000)

Tokens are estimated at 4 characters each (no tokenizer is downloaded). Bad values are
reported and the default is used.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
"""Characters per token for size estimates (a conservative average for English and code)."""


@dataclass(frozen=True, kw_only=True)
class McpLimits:
    """Limits applied to every server of a pool (seconds, tokens, attempts)."""

    startup_timeout_s: float = 30.0
    tool_timeout_s: float = 600.0
    max_output_tokens: int = 25_000
    warn_output_tokens: int = 10_000
    restart_attempts: int = 5
    """Restarts of a crashed or unreachable server before it stays failed (until the user
    asks to reconnect)."""
    backoff_initial_s: float = 1.0
    """First wait before a restart; doubles with each attempt (Claude Code: 1 s, 5 tries)."""
    stable_after_s: float = 30.0
    """A server up this long counts as healthy again: its restart budget is refilled."""
    first_turn_wait_s: float = 30.0
    """How long a turn waits for servers still starting before it goes on without them."""
    refresh_interval_s: float = 0.5
    """Least time between two tool-list refreshes of one server (a list_changed flood)."""

    def backoff(self, attempt: int) -> float:
        """Wait before restart ``attempt`` (1-based), seconds."""
        return float(self.backoff_initial_s * (2 ** max(0, attempt - 1)))


def _positive(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        log.warning("%s=%r is not a positive number; using %s", name, raw, default)
        return default
    return value


def limits_from_env(environ: Mapping[str, str], **overrides: float) -> McpLimits:
    """Limits from ``MCP_TIMEOUT``, ``MCP_TOOL_TIMEOUT`` and ``MAX_MCP_OUTPUT_TOKENS`` (see
    the module docstring); ``overrides`` replace fields (e.g. ``first_turn_wait_s``)."""
    startup = _positive(environ, "MCP_TIMEOUT", 30_000) / 1000
    values: dict[str, float] = {
        "startup_timeout_s": startup,
        "tool_timeout_s": _positive(environ, "MCP_TOOL_TIMEOUT", 600_000) / 1000,
        "max_output_tokens": int(_positive(environ, "MAX_MCP_OUTPUT_TOKENS", 25_000)),
        "first_turn_wait_s": startup,
    }
    values.update(overrides)
    return McpLimits(**values)  # type: ignore[arg-type]
