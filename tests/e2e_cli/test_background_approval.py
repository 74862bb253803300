"""A background run's tool call that needs approval waits for the editor: ``ps`` shows the run
``waiting for approval``; with no editor to answer, the call is denied at the deadline with a
line in the run's log, and the run goes on. A deny rule still refuses without asking."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from lsp_agent.testing.scenario import reply, scenario, tool_use
from tests.e2e_cli.conftest import RUN_TIMEOUT_S, cli_env
from tests.e2e_cli.test_background_runs import (  # the fixtures and helpers of background runs
    Servers,
    _ps_records,
    _start_bg,
    lsp_agent,
    runtime,
    server,
)

__all__ = ["runtime", "server"]


def _wait_until_ended(env: dict[str, str]) -> dict[str, object]:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        (record,) = _ps_records(env)
        if record["state"] != "running":
            return record
        time.sleep(0.2)
    raise AssertionError("the background run did not end")


def test_nobody_answering_denies_at_the_deadline(
    project: Path, runtime: Path, server: Servers
) -> None:
    script = scenario(
        reply(tool_use("Bash", {"command": "rm -f nothing-here"}, id="toolu_rm")),
        reply(tool_use("Bash", {"command": "touch asked.txt"}, id="toolu_touch")),
        reply("Could not create it."),
    )
    _scripted, url = server(script)
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime), LSP_AGENT_BG_APPROVAL_TIMEOUT_S="6")
    args = ["run", "-p", "make a file", "--disallowedTools", "Bash(rm:*)"]
    run_id, _session = _start_bg(args, env=env, cwd=project)

    deadline = time.monotonic() + RUN_TIMEOUT_S
    listed = ""
    while "waiting for approval" not in listed and time.monotonic() < deadline:
        listed = lsp_agent("ps", env=env).stdout
        time.sleep(0.1)
    assert f"{run_id}  waiting for approval" in listed
    (record,) = _ps_records(env)
    assert (record["state"], record["waiting_for_approval"]) == ("running", True)
    folder = runtime / "lsp-agent" / "runs"
    (ask,) = [n for n in os.listdir(folder) if n.endswith(".ask")]
    assert ask.startswith(f"{run_id}.")
    assert os.stat(folder / ask).st_mode & 0o777 == 0o600

    record = _wait_until_ended(env)
    assert (record["state"], record["waiting_for_approval"]) == ("done", False)
    assert not (project / "asked.txt").exists()
    logs = lsp_agent("logs", run_id, env=env)
    assert logs.stdout == "Could not create it.\n"
    err = Path(str(record["err_log"])).read_text()
    # The deny rule refused the first call without asking; only the second one waited.
    assert err.count("no editor answered") == 1, err
    assert "lsp-agent: no editor answered within 6 s: " in err
    assert "touch asked.txt denied" in err
    assert [n for n in os.listdir(folder) if n.endswith((".ask", ".answer"))] == []
    # The model is told nobody answered, not that the user refused.
    result = json.dumps(_scripted.requests[-1]["messages"][-1])
    assert "No editor answered within 6 s: nobody approved or refused it." in result
    assert "rejected" not in result


def test_dont_ask_denies_at_once_without_a_request(
    project: Path, runtime: Path, server: Servers
) -> None:
    script = scenario(
        reply(tool_use("Bash", {"command": "touch asked.txt"}, id="toolu_touch")),
        reply("Not allowed."),
    )
    _scripted, url = server(script)
    # A wait this long would outlast the test: the run must not wait at all.
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime), LSP_AGENT_BG_APPROVAL_TIMEOUT_S="500")
    args = ["run", "-p", "make a file", "--permission-mode", "dontAsk"]
    run_id, _session = _start_bg(args, env=env, cwd=project)
    record = _wait_until_ended(env)
    assert record["state"] == "done"
    assert not (project / "asked.txt").exists()
    err = Path(str(record["err_log"])).read_text()
    assert "no editor answered" not in err
    assert lsp_agent("logs", run_id, env=env).stdout == "Not allowed.\n"


def test_a_command_too_long_to_show_is_denied_without_asking(
    project: Path, runtime: Path, server: Servers
) -> None:
    # Padding pushes the dangerous end of the command past what the editor's question shows:
    # the user would allow "touch ok.txt" and run what follows it too.
    command = "touch ok.txt" + " " * 5000 + "&& touch hidden.txt"
    script = scenario(
        reply(tool_use("Bash", {"command": command}, id="toolu_long")),
        reply("Denied."),
    )
    scripted, url = server(script)
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime), LSP_AGENT_BG_APPROVAL_TIMEOUT_S="6")
    run_id, _session = _start_bg(["run", "-p", "make a file"], env=env, cwd=project)
    record = _wait_until_ended(env)
    assert record["state"] == "done"
    assert not (project / "ok.txt").exists()
    assert not (project / "hidden.txt").exists()
    err = Path(str(record["err_log"])).read_text()
    assert "no editor answered" not in err
    assert "too long to show for approval" in err, err
    assert "too long to show for approval" in json.dumps(scripted.requests[-1]["messages"])
    assert lsp_agent("logs", run_id, env=env).stdout == "Denied.\n"


def test_a_run_killed_while_it_waits_leaves_no_request_behind(
    project: Path, runtime: Path, server: Servers
) -> None:
    script = scenario(
        reply(tool_use("Bash", {"command": "touch asked.txt"}, id="toolu_touch")),
        reply("Not reached."),
    )
    _scripted, url = server(script)
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime), LSP_AGENT_BG_APPROVAL_TIMEOUT_S="500")
    run_id, _session = _start_bg(["run", "-p", "make a file"], env=env, cwd=project)
    folder = runtime / "lsp-agent" / "runs"
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not any(n.endswith(".ask") for n in os.listdir(folder)):
        assert time.monotonic() < deadline, "the run never asked"
        time.sleep(0.1)
    assert lsp_agent("kill", run_id, env=env).returncode == 0
    record = _wait_until_ended(env)
    assert record["state"] == "killed"
    # An editor would otherwise go on finding a request nobody waits for.
    assert [n for n in os.listdir(folder) if n.endswith((".ask", ".answer"))] == []
