"""MCP failures on a run's stderr: held back while the servers start (the run's own line says
it), repeats dropped, a new failure later in the run shown."""

from __future__ import annotations

import logging

import pytest

from lsp_agent.headless.mcp_notices import McpFailureNotices
from lsp_agent.mcp.connection import FAILED_LOG
from lsp_agent.mcp.connection import log as connection_log


def test_each_failure_shows_once(caplog: pytest.LogCaptureFixture) -> None:
    notices = McpFailureNotices()
    notices.install()
    try:
        with caplog.at_level(logging.ERROR, logger=connection_log.name):
            connection_log.error(FAILED_LOG, "a", "no such command")
            line = notices.line("a", "failed", "no such command")
            notices.started = True
            connection_log.error(FAILED_LOG, "a", "no such command")  # a retry
            connection_log.error(FAILED_LOG, "a", "the connection was lost")
            connection_log.error("something else")
    finally:
        notices.remove()
    assert line == "lsp-agent: MCP server a: failed: no such command\n"
    assert [r.getMessage() for r in caplog.records] == [
        "MCP server a failed: the connection was lost",
        "something else",
    ]
    connection_log.error(FAILED_LOG, "a", "no such command")  # removed: no longer filtered
    assert caplog.records[-1].getMessage() == "MCP server a failed: no such command"
