"""Cold ``run -p``: what is imported before the first model request.

The CLI runs as a subprocess through a small driver that adds an audit hook
(:func:`sys.addaudithook`, an interpreter feature, nothing patched) and then calls the CLI's
``main`` as the console script does. At the first ``socket.connect`` to the scripted model
server's port the hook writes the names in ``sys.modules`` to a file: exactly what the run had
imported when its first model request left. No timings are asserted: what is loaded is.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lsp_agent.testing.scenario import expecting, reply, scenario
from lsp_agent.testing.thread import ScriptedServerThread
from tests.e2e_cli.conftest import cli_env, run_process

DRIVER = """
import json, sys

port, out = int(sys.argv[1]), sys.argv[2]
seen = []

def hook(event, args):
    if seen or event != "socket.connect":
        return
    address = args[1]
    if isinstance(address, tuple) and len(address) >= 2 and address[1] == port:
        seen.append(True)
        with open(out, "w") as f:
            json.dump(sorted(sys.modules), f)

sys.addaudithook(hook)
sys.argv = ["lsp-agent", *sys.argv[3:]]
from lsp_agent.cli import main

sys.exit(main())
"""

NOT_BEFORE_FIRST_REQUEST = (
    "markdown_it",  # memory-file parsing: no memory file here
    "frontmatter",
    "yaml",
    "wcmatch",
    "lsp_agent.diagnostics.managed",  # managed language servers: no --diagnostics
    "lsp_agent.diagnostics.service",
    "lsp_agent.tools.lsp_tools",
    "lsp_agent.permissions.bash_decisions",  # Bash permission checks: no Bash call yet
    "lsp_agent.permissions.shell_walk",
    "lsp_agent.mcp.client",  # no MCP server configured
    "mcp",
    "keyring",  # the OAuth token store: only when an OAuth server logs in or connects
    "pathspec",  # path rules compile on first match: the session's own results rule is plain
)
"""Modules (and packages, with their submodules) the first request of a plain run in a
folder with no memory, rules or MCP servers must not wait for."""


def _loaded_at_first_request(project: Path, tmp_path: Path) -> list[str]:
    server = ScriptedServerThread(
        scenario=scenario(reply("hi", expect=expecting(last_user_contains="Say hi.")), name="hi")
    )
    base_url = server.start()
    out = tmp_path / "modules.json"
    try:
        port = base_url.rsplit(":", 1)[1].split("/")[0]
        proc = run_process(
            [sys.executable, "-c", DRIVER, port, str(out), "run", "-p", "Say hi."],
            cwd=project,
            env=cli_env(base_url, LSP_AGENT_NO_DAEMON="1"),
        )
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hi\n"
    server.assert_done()
    modules: list[str] = json.loads(out.read_text())
    return modules


def test_first_request_waits_for_no_module_it_does_not_use(project: Path, tmp_path: Path) -> None:
    modules = _loaded_at_first_request(project, tmp_path)
    assert "anthropic" in modules  # the hook saw the model request, not some other socket
    early = sorted(
        name
        for name in modules
        for banned in NOT_BEFORE_FIRST_REQUEST
        if name == banned or name.startswith(banned + ".")
    )
    assert early == [], early
