"""How log records read on a run's stderr: as the run's other messages do
(``lsp-agent: ...``), not as log-format lines (``WARNING lsp_agent.mcp.connection: ...``)."""

from __future__ import annotations

import logging

PREFIX = "lsp-agent: "
"""Every stderr line of a run starts so (the README's promise for messages)."""


class RunLogFormatter(logging.Formatter):
    """``lsp-agent: MESSAGE`` for the project's own loggers; another library's record keeps its
    logger's name (``lsp-agent: httpx: MESSAGE``) so the user can tell whose it is. An
    exception's traceback, when logged, follows on the next lines as usual."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        """One line for ``record`` (its message already interpolated)."""
        own = record.name == "lsp_agent" or record.name.startswith("lsp_agent.")
        return f"{PREFIX}{record.message}" if own else f"{PREFIX}{record.name}: {record.message}"
