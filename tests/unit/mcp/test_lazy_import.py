"""Start-up stays fast for users without MCP servers: nothing on the paths every session and
run takes imports the ``mcp`` SDK (or httpx2, starlette, uvicorn) until a server is enabled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import asyncio, os, sys
from pathlib import Path
import lsp_agent.sessions.manager, lsp_agent.headless.runner, lsp_agent.lsp.mcp_door
from lsp_agent.mcp.limits import McpLimits
from lsp_agent.mcp.service import McpService
from lsp_agent.mcp.sources import McpSources

root = Path(sys.argv[1])
sources = McpSources(cwd=root, home=root, trusted=True, environ={}, settings_files={})
service = McpService(sources=sources, limits=McpLimits())
assert asyncio.run(service.tools()) == []
assert service.statuses() == []
heavy = sorted(m for m in ("mcp", "httpx2", "starlette", "uvicorn") if m in sys.modules)
print(",".join(heavy) or "none")
"""


def test_no_sdk_import_without_servers(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert out.stdout.strip() == "none", out.stderr
