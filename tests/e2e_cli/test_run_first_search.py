"""A ``run -p`` whose first tool call is a search: its one-time costs are paid on a thread of
their own while the first model request is made and awaited, not in the search's turn.

The CLI runs as a subprocess through a driver that adds an audit hook (an interpreter
feature, nothing patched) and calls the CLI's ``main`` as the console script does. The hook
notes the first ``socket.connect`` to the scripted model server, every ``subprocess.Popen``
of the search sentinel (with the thread that started it) and every import of ``pathspec``.
No timings are asserted: who did what, and in which order, is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lsp_agent.testing.scenario import reply, scenario, tool_use
from lsp_agent.testing.thread import ScriptedServerThread
from lsp_agent.tools._leaf import SENTINEL_NAME
from tests.e2e_cli.conftest import RUN_TIMEOUT_S, cli_env, run_process

DRIVER = """
import json, sys, threading

port, out, sentinel_name = int(sys.argv[1]), sys.argv[2], sys.argv[3]
events = []

def note(*event):
    events.append(event)
    with open(out, "w") as f:
        json.dump(events, f)

def hook(event, args):
    if event == "socket.connect":
        address = args[1]
        if isinstance(address, tuple) and len(address) >= 2 and address[1] == port:
            if not any(e[0] == "connect" for e in events):
                note("connect")
    elif event == "subprocess.Popen":
        if sentinel_name in [str(a) for a in (args[1] or ())]:
            note("sentinel", threading.current_thread().name)
    elif event == "import" and args[0] == "pathspec" and "pathspec" not in sys.modules:
        note("pathspec")

sys.addaudithook(hook)
sys.argv = ["lsp-agent", *sys.argv[4:]]
from lsp_agent.cli import main

sys.exit(main())
"""


def _run(project: Path, tmp_path: Path, *flags: str) -> list[list[str]]:
    server = ScriptedServerThread(
        scenario=scenario(
            reply(tool_use("Glob", {"pattern": "*.py"})),
            reply("found"),
            name="first-search",
        )
    )
    base_url = server.start()
    out = tmp_path / "events.json"
    port = base_url.rsplit(":", 1)[1].split("/")[0]
    driver = [sys.executable, "-c", DRIVER, port, str(out), SENTINEL_NAME]
    try:
        proc = run_process(
            [*driver, "run", "-p", "Find.", "--permission-mode", "bypassPermissions", *flags],
            cwd=project,
            env=cli_env(base_url, LSP_AGENT_NO_DAEMON="1"),
        )
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "found\n"
    server.assert_done()
    events: list[list[str]] = json.loads(out.read_text())
    return events


def test_the_sentinel_starts_on_the_warm_up_thread_and_pathspec_is_never_imported(
    project: Path, tmp_path: Path
) -> None:
    # The warm-up starts as the first request is prepared, so its sentinel may start before
    # or after the connection; the Glob call finds it running (one start in all), and its
    # permission check (the session's own plain Read rule) needs no pathspec.
    events = _run(project, tmp_path)
    assert sorted(events) == [["connect"], ["sentinel", "lsp-agent-warm-search"]]


def test_a_run_without_search_tools_starts_no_sentinel(project: Path, tmp_path: Path) -> None:
    # Glob is not among the run's tools: the call is refused, the sentinel never starts.
    assert _run(project, tmp_path, "--tools", "Read") == [["connect"]]


def test_warm_up_starts_this_process_sentinel() -> None:
    code = (
        "import os, sys\n"
        "from lsp_agent.tools.warm import start_search_warm_up\n"
        "start_search_warm_up().join()\n"
        "kids = [p for p in os.listdir('/proc') if p.isdigit()\n"
        "        and open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[1]"
        " == str(os.getpid())]\n"
        "names = [open(f'/proc/{p}/cmdline', 'rb').read() for p in kids]\n"
        f"print(sum({SENTINEL_NAME!r}.encode() in n for n in names), 'resource' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "1 True\n"
