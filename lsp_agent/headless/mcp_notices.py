"""Each MCP server failure shown once on a ``run -p``'s stderr.

The connection's supervisor logs every failed start (and retries a few times, logging each),
and the run prints the servers that are not ready before the turn. :class:`McpFailureNotices`
is a logging filter on the connection's logger for the length of the run: it holds back the
failures logged while the servers start (the run's own line says it) and any failure whose
server and error were already shown; a new failure later in the run still shows.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

# The connection's logger by name: importing lsp_agent.mcp.connection would load the MCP SDK
# before a run's first model request, which a run without MCP servers never needs.
connection_log = logging.getLogger("lsp_agent.mcp.connection")


def shown_state(state: str) -> str:
    """A server state as the command line shows it to a person (``mcp list``, a run's stderr
    lines): the stream-json ``init`` event's hyphens (``needs_approval`` → ``needs-approval``),
    so one name reads the same in every output of the command; ``--json`` and the editor
    protocol keep the identifiers with underscores."""
    return state.replace("_", "-")


FIXES = {
    "needs_approval": ": approve it once with `lsp-agent mcp approve {name}`, "
    "or pass --mcp-config .mcp.json to this run",
}
"""What the user can do about a server in a state, appended to its line (``{name}``)."""


class McpFailureNotices(logging.Filter):
    """Install with :meth:`install`, take away with :meth:`remove`; :meth:`line` gives the
    run's own line for a server's status."""

    def __init__(self) -> None:
        super().__init__()
        self.started = False
        """Whether the servers' start is over (failures are then shown unless seen)."""
        self._shown: set[tuple[str, str]] = set()
        self._problems: list[str] = []

    def install(self) -> None:
        """Filter the connection logger's records from now on."""
        connection_log.addFilter(self)

    def remove(self) -> None:
        """Stop filtering (idempotent)."""
        connection_log.removeFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether ``record`` is shown (see the module doc)."""
        from lsp_agent.mcp.connection import FAILED_LOG  # loaded: it logged the record

        args = record.args
        if record.msg != FAILED_LOG or not isinstance(args, tuple) or len(args) != 2:
            return True
        key = (str(args[0]), str(args[1]))
        if not self.started or key in self._shown:
            return False
        self._shown.add(key)
        return True

    def problems_shown(self, messages: Iterable[str]) -> None:
        """The configuration problems already printed: an ``invalid`` server whose error one
        of them holds gets no second line."""
        self._problems.extend(messages)

    def line(self, name: str, state: str, error: str | None) -> str:
        """``lsp-agent: MCP server NAME: STATE: ERROR`` (newline-terminated) for a server that
        is not ready, with what to do about it (:data:`FIXES`); its failure counts as shown.
        Empty for an ``invalid`` server whose problem was printed already."""
        if state == "invalid" and error and any(error in p for p in self._problems):
            return ""
        argument = f"-- {name}" if name.startswith("-") else name  # not read as an option
        fix = FIXES.get(state, "").format(name=argument)
        if error:
            self._shown.add((name, error))
            return f"lsp-agent: MCP server {name}: {shown_state(state)}: {error}{fix}\n"
        return f"lsp-agent: MCP server {name}: {shown_state(state)}{fix}\n"
