"""run -p's stderr: log records read as the run's other messages (``lsp-agent: ...``)."""

from __future__ import annotations

import io
import logging

from lsp_agent.headless.log_lines import RunLogFormatter


def _emit(name: str, message: str, *args: object) -> str:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(RunLogFormatter())
    logger = logging.getLogger(name)
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning(message, *args)
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    return out.getvalue()


def test_the_projects_records_read_as_lsp_agent_lines() -> None:
    line = _emit("lsp_agent.mcp.connection", "MCP server %s asked to open a page", "raw")
    assert line == "lsp-agent: MCP server raw asked to open a page\n"
    assert "WARNING" not in line


def test_another_librarys_record_keeps_its_name() -> None:
    assert _emit("httpx", "boom") == "lsp-agent: httpx: boom\n"
    # A name that merely starts like ours is not ours.
    assert _emit("lsp_agentx", "x") == "lsp-agent: lsp_agentx: x\n"
