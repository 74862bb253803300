"""``lsp-agent run -p --bg`` and ``ps`` / ``logs`` / ``attach`` / ``kill``: a background run is
handed to a real daemon (started on first use), outlives its client, writes the bytes a
foreground run prints, and is listed, followed and ended by id; a background run never falls
back to the foreground.

Each test has its own runtime directory (``XDG_RUNTIME_DIR``, set by the package's conftest),
so no daemon of the user's (or of another test) is reached; any daemon started is stopped.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.scenario import reply, scenario
from tests.e2e_cli.conftest import (
    RUN_TIMEOUT_S,
    ScriptedServerThread,
    another_build_daemon,
    cli_env,
    run_cli,
)
from tests.e2e_cli.test_run_formats import ARGS, FIXED, fix_add

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="the daemon needs Linux peer credentials"
)


@pytest.fixture
def runtime(isolated_home: Path) -> Iterator[Path]:
    """The test's runtime directory; the daemon started in it is stopped (its runs killed)
    afterwards."""
    base = Path(os.environ["XDG_RUNTIME_DIR"])
    yield base
    env = {**os.environ, "XDG_RUNTIME_DIR": str(base)}
    for record in _ps_records(env):
        if record["state"] == "running":
            lsp_agent("kill", record["id"], env=env)
    lsp_agent("daemon", "stop", env=env)


class Servers:
    """Scripted models started by a test (``{{cwd}}`` is the project), stopped afterwards."""

    def __init__(self, project: Path) -> None:
        self._project = project
        self._started: list[ScriptedServerThread] = []

    def __call__(self, script: Any) -> tuple[ScriptedServerThread, str]:
        started = ScriptedServerThread(scenario=script, variables={"cwd": str(self._project)})
        url = started.start()
        self._started.append(started)
        return started, url

    def stop(self) -> None:
        for started in self._started:
            started.stop()


@pytest.fixture
def server(project: Path) -> Iterator[Servers]:
    servers = Servers(project)
    yield servers
    servers.stop()


def lsp_agent(
    *args: str, env: dict[str, str], cwd: Path | None = None, stdin: Any = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        env=env,
        cwd=cwd,
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def _ps_records(env: dict[str, str]) -> list[dict[str, Any]]:
    listed = lsp_agent("ps", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    records: list[dict[str, Any]] = json.loads(listed.stdout)
    return records


def _start_bg(
    args: list[str], *, env: dict[str, str], cwd: Path, starts_daemon: bool | None = None
) -> tuple[str, str]:
    started = lsp_agent(*args, "--bg", env=env, cwd=cwd)
    assert started.returncode == 0, started.stderr
    run_id, session_id = started.stdout.strip().split("\t")
    assert f"background run {run_id} started (session {session_id})" in started.stderr
    if starts_daemon is not None:
        # Starting the daemon takes seconds: the user is told why nothing happens meanwhile.
        said = "lsp-agent: starting the background daemon…" in started.stderr
        assert said == starts_daemon, started.stderr
    return run_id, session_id


def _attached(
    run_id: str, *, env: dict[str, str], via: Sequence[str] = ()
) -> subprocess.Popen[str]:
    """``lsp-agent attach RUN_ID`` started (through ``via``, a command that ends by exec'ing
    its arguments), once the run's first event (a ``system`` line) has reached its stdout."""
    attach = subprocess.Popen(
        [*via, sys.executable, "-m", "lsp_agent", "attach", run_id],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert attach.stdout is not None
    assert json.loads(attach.stdout.readline())["type"] == "system"  # attached
    return attach


def _stalled() -> Any:
    """A model that starts answering, then never finishes (the run stays running)."""
    return scenario(reply("Thinking it over...", stall_after_events=2), name="stalled")


def test_a_background_run_gives_the_foreground_bytes_and_is_listed(
    project: Path, runtime: Path, server: Servers
) -> None:
    scripted, url = server(fix_add())
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime))
    run_id, session_id = _start_bg(ARGS, env=env, cwd=project, starts_daemon=True)

    attached = lsp_agent("attach", run_id[:4], env=env)
    assert (attached.returncode, attached.stdout, attached.stderr) == (
        0,
        "Fixed: add() subtracted.\n",
        "",
    )
    scripted.assert_done()
    assert (project / "calc.py").read_text() == FIXED

    (record,) = _ps_records(env)
    assert {k: record[k] for k in ("id", "session_id", "state", "exit_code", "prompt")} == {
        "id": run_id,
        "session_id": session_id,
        "state": "done",
        "exit_code": 0,
        "prompt": "fix add",
    }
    assert record["cwd"] == str(project)
    assert "--bg" not in record["argv"]
    table = lsp_agent("ps", env=env).stdout.splitlines()
    assert table[0].split()[:3] == ["ID", "STATE", "EXIT"]
    assert table[1].split()[:3] == [run_id, "done", "0"]
    logs = lsp_agent("logs", run_id, env=env)
    assert (logs.returncode, logs.stdout) == (0, "Fixed: add() subtracted.\n")

    folder = runtime / "lsp-agent" / "runs"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    for name in (f"{run_id}.json", f"{run_id}.out", f"{run_id}.err"):
        assert stat.S_IMODE(os.stat(folder / name).st_mode) == 0o600, name
    status = lsp_agent("daemon", "status", env=env).stdout
    assert "0 runs in progress (0 in the background), 1 served)" in status

    # The same invocation in the foreground prints the same bytes.
    other = project.parent / "prok"
    other.mkdir()
    (other / "calc.py").write_text((project / "calc.py").read_text().replace("+", "-"))
    here = run_cli(ARGS, scenario=fix_add(), cwd=other, extra_env={"LSP_AGENT_NO_DAEMON": "1"})
    assert here.proc.stdout == attached.stdout


def test_attach_detaches_on_ctrl_c_and_kill_ends_the_run(
    project: Path, runtime: Path, server: Servers
) -> None:
    _scripted, url = server(_stalled())
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime))
    assert lsp_agent("daemon", "start", "--idle-timeout", "1", env=env).returncode == 0
    args = ["run", "-p", "think", "--output-format", "stream-json"]
    run_id, _session = _start_bg(args, env=env, cwd=project)

    attach = _attached(run_id, env=env)
    time.sleep(1.5)  # past the daemon's idle timeout
    attach.send_signal(signal.SIGINT)
    _out, err = attach.communicate(timeout=RUN_TIMEOUT_S)
    assert attach.returncode == 130, err
    assert f"detached from run {run_id}; it goes on" in err
    (record,) = _ps_records(env)
    assert record["state"] == "running"  # neither the detach nor the idle timeout ended it
    status = lsp_agent("daemon", "status", env=env).stdout
    assert "1 run in progress (1 in the background)" in status

    # Stopping waits for the background run; meanwhile the daemon answers but takes no run.
    stopped = lsp_agent("daemon", "stop", env=env)
    assert "stopping once its background runs end (1 running" in stopped.stdout
    status = lsp_agent("daemon", "status", env=env).stdout
    assert status.startswith("lsp-agent daemon: stopping once its runs end"), status
    refused = lsp_agent("run", "-p", "more", "--bg", env=env, cwd=project)
    assert refused.returncode == 1
    assert "the daemon refused the run: the daemon is stopping" in refused.stderr

    killed = lsp_agent("kill", run_id[:3], env=env)
    assert (killed.returncode, killed.stdout) == (0, f"lsp-agent: killed background run {run_id}\n")
    (record,) = _ps_records(env)
    assert (record["state"], record["exit_code"]) == ("killed", 128 + signal.SIGTERM)
    again = lsp_agent("kill", run_id, env=env)
    assert again.returncode == 1
    assert f"background run {run_id} is not running (killed, exit 143)" in again.stderr
    assert lsp_agent("attach", run_id, env=env).returncode == 143
    socket_file = runtime / "lsp-agent" / "daemon.sock"
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while socket_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not socket_file.exists()  # the daemon ended once its last run did


def test_attach_detaches_on_ctrl_c_when_started_with_sigint_ignored(
    project: Path, runtime: Path, server: Servers
) -> None:
    # A background job of a non-interactive shell (a script's `cmd &`, an agent's shell) starts
    # with SIGINT ignored; Python then installs no handler of its own, and attach ignored the
    # interrupt it is documented to detach on.
    _scripted, url = server(_stalled())
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime))
    args = ["run", "-p", "think", "--output-format", "stream-json"]
    run_id, _session = _start_bg(args, env=env, cwd=project)
    ignoring = ["/bin/sh", "-c", 'trap "" INT; exec "$@"', "sh"]
    attach = _attached(run_id, env=env, via=ignoring)
    attach.send_signal(signal.SIGINT)
    try:
        _out, err = attach.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        attach.kill()
    assert attach.returncode == 130, err
    assert f"detached from run {run_id}; it goes on" in err
    (record,) = _ps_records(env)
    assert record["state"] == "running"


def test_unknown_and_ambiguous_ids_are_named(project: Path, runtime: Path, server: Servers) -> None:
    _scripted, url = server(scenario(reply("one"), reply("two")))
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime))
    first, _ = _start_bg(["run", "-p", "one"], env=env, cwd=project)
    assert lsp_agent("attach", first, env=env).returncode == 0
    folder = runtime / "lsp-agent" / "runs"
    # A second record whose id shares the first one's opening character.
    data = json.loads((folder / f"{first}.json").read_text())
    twin = first[0] + ("0" if first[1] != "0" else "1") + first[2:]
    fd = os.open(folder / f"{twin}.json", os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({**data, "id": twin}, handle)

    missing = lsp_agent("logs", "ffffffff0", env=env)
    assert (missing.returncode, missing.stderr) == (
        1,
        "lsp-agent: error: no background run 'ffffffff0' (see `lsp-agent ps`)\n",
    )
    ambiguous = lsp_agent("attach", first[0], env=env)
    assert ambiguous.returncode == 1
    assert f"{first[0]!r} is ambiguous: it starts" in ambiguous.stderr
    assert first in ambiguous.stderr and twin in ambiguous.stderr
    bad = lsp_agent("kill", "../x", env=env)
    assert "is not a run id" in bad.stderr


def test_records_open_to_others_are_ignored(project: Path, runtime: Path, server: Servers) -> None:
    _scripted, url = server(scenario(reply("one")))
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime))
    run_id, _ = _start_bg(["run", "-p", "one"], env=env, cwd=project)
    assert lsp_agent("attach", run_id, env=env).returncode == 0
    folder = runtime / "lsp-agent" / "runs"
    planted = json.loads((folder / f"{run_id}.json").read_text())
    planted = {**planted, "id": "abcdef12", "log": "/etc/passwd"}
    (folder / "abcdef12.json").write_text(json.dumps(planted))
    os.chmod(folder / "abcdef12.json", 0o644)
    assert [r["id"] for r in _ps_records(env)] == [run_id]
    assert "no background run 'abcdef12'" in lsp_agent("logs", "abcdef12", env=env).stderr


def test_bg_never_runs_in_the_foreground(project: Path, runtime: Path, server: Servers) -> None:
    scripted, url = server(fix_add())
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime))
    refused = lsp_agent(*ARGS, "--bg", env={**env, "LSP_AGENT_NO_DAEMON": "1"}, cwd=project)
    assert refused.returncode == 1
    assert "--bg needs the daemon, and LSP_AGENT_NO_DAEMON is set" in refused.stderr

    folder = runtime / "lsp-agent"
    folder.mkdir(mode=0o700)
    hung = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    hung.bind(str(folder / "daemon.sock"))
    os.chmod(folder / "daemon.sock", 0o600)
    hung.listen(4)  # accepts into the backlog, never answers
    try:
        stuck = lsp_agent(*ARGS, "--bg", env=env, cwd=project)
    finally:
        hung.close()
    assert stuck.returncode == 1
    assert "--bg: the daemon did not answer within 1 s" in stuck.stderr

    os.chmod(folder, 0o755)
    loose = lsp_agent(*ARGS, "--bg", env=env, cwd=project)
    assert loose.returncode == 1
    assert "is open to other users (mode 755)" in loose.stderr
    os.chmod(folder, 0o700)

    no_prompt = lsp_agent("run", "-p", "--bg", env=env, cwd=project)
    assert no_prompt.returncode == 2
    assert "--bg needs the prompt" in no_prompt.stderr
    assert scripted.requests == []
    assert (project / "calc.py").read_text() != FIXED


def test_a_piped_prompt_reaches_the_background_run(
    project: Path, runtime: Path, server: Servers
) -> None:
    _scripted, url = server(scenario(reply("Answer from stdin.")))
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime))
    started = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "run", "-p", "--bg"],
        env=env,
        cwd=project,
        input="say something",
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.split("\t")[0]
    attached = lsp_agent("attach", run_id, env=env)
    assert (attached.returncode, attached.stdout) == (0, "Answer from stdin.\n")
    assert _ps_records(env)[0]["prompt"] == "(stdin)"


def test_a_run_outlives_a_dead_daemon_and_can_still_be_killed(
    project: Path, runtime: Path, server: Servers
) -> None:
    _scripted, url = server(_stalled())
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime))
    run_id, _session = _start_bg(["run", "-p", "think"], env=env, cwd=project)
    status = lsp_agent("daemon", "status", env=env).stdout
    daemon_pid = int(status.split("pid ")[1].split(",")[0])
    os.kill(daemon_pid, signal.SIGKILL)  # the daemon dies; the run (its own session) goes on
    (record,) = _ps_records(env)
    assert record["state"] == "running"

    killed = lsp_agent("kill", run_id, env=env)
    assert killed.returncode == 0, killed.stderr
    assert f"killed background run {run_id}" in killed.stdout
    (record,) = _ps_records(env)
    assert (record["state"], record["exit_code"]) == ("killed", None)


def test_a_daemon_of_another_build_is_named(project: Path, runtime: Path, server: Servers) -> None:
    scripted, url = server(fix_add())
    env = cli_env(url, XDG_RUNTIME_DIR=str(runtime))
    with another_build_daemon(runtime):
        refused = lsp_agent(*ARGS, "--bg", env=env, cwd=project)
    assert refused.returncode == 1
    assert (
        "--bg: the daemon refused the run: the daemon runs another build of lsp-agent (0.old) "
        "(`lsp-agent daemon stop` ends it once its runs end" in refused.stderr
    )
    assert scripted.requests == []


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process start times from /proc")
def test_kill_spares_a_process_that_reused_a_dead_runs_pid(runtime: Path) -> None:
    """A run recorded as running whose daemon died unseen, and whose pid now belongs to
    another program (here: a process group of its own started long after the run): ``kill``
    must not end that program's group."""
    from lsp_agent.store.runs import RunRecord, write_record

    other = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        folder = runtime / "lsp-agent" / "runs"
        folder.mkdir(parents=True, mode=0o700)
        (runtime / "lsp-agent").chmod(0o700)
        record = RunRecord(
            id="0badc0de",
            session_id=None,
            pid=other.pid,
            cwd="/",
            argv=("run", "-p", "x"),
            prompt="x",
            started=time.time() - 3600,  # the run started an hour ago; the pid is new
        )
        write_record(folder, record)
        env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
        killed = lsp_agent("kill", "0badc0de", env=env)
        assert killed.returncode != 0
        assert "another process" in killed.stderr, killed.stderr
        assert other.poll() is None  # still running
    finally:
        other.kill()
        other.wait()
