"""``lsp-agent demo`` end to end, offline: the real server in a subprocess driven over LSP by
the demo's editor, the bundled scenario on the scripted model, the project's tests run for real."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.demo import runner, verification
from lsp_agent.demo.runner import BUGGY_FILE, OFFLINE_NOTICE, UNSAVED_COMMENT, DemoOptions
from lsp_agent.demo.verification import scenario_variables
from lsp_agent.model.background import BACKGROUND_ENV

DEMO_TIMEOUT_S = 180


def run_demo(workdir: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PYTEST_"))}
    # A user's environment: background requests on (the suite turns them off for other tests).
    env.pop(BACKGROUND_ENV, None)
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", "demo", "--workdir", str(workdir), *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_demo_fixes_the_bug_and_keeps_the_unsaved_comment(tmp_path: Path) -> None:
    workdir = tmp_path / "demo"
    proc = run_demo(workdir, "--yes")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert OFFLINE_NOTICE in out
    # The agent read the editor's buffer (the unsaved comment), asked before editing and
    # running commands, and its edit went through workspace/applyEdit to that buffer.
    assert "permission requested: Edit inventory/money.py" in out
    assert "permission requested: python -m unittest" in out
    assert "[editor] applied the agent's edit to inventory/money.py" in out
    assert "[editor] saved inventory/money.py (the server asked" in out
    assert "survived the agent's edit" in out
    assert "FAILED (failures=2)" in out  # the agent's first test run
    # A managed ruff server verified the agent's edit: the verdict names the buffer version
    # the edit produced, and the final claim rests on it.
    assert "verification: a managed `ruff server`" in out
    assert "ruff: clean for version 3 of inventory/money.py" in out
    assert "ruff reports no new problems for the exact text I wrote (editor version 3" in out
    assert "✓ ruff checked the exact text the agent left in the buffer" in out
    assert out.rstrip().endswith("demo finished: the tests pass")
    fixed = (workdir / BUGGY_FILE).read_text()
    assert fixed.startswith(UNSAVED_COMMENT)
    assert "int(float(text) * 100)" not in fixed
    tests = subprocess.run(
        [sys.executable, "-m", "unittest"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT_S,
        check=False,
    )
    assert tests.returncode == 0, tests.stderr
    assert "Ran 11 tests" in tests.stderr


def test_demo_without_a_terminal_or_yes_rejects_and_fails(tmp_path: Path) -> None:
    workdir = tmp_path / "demo"
    proc = run_demo(workdir)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "rejected: not on a terminal and --yes not given" in out
    assert "int(float(text) * 100)" in (workdir / BUGGY_FILE).read_text()  # not fixed


def _demo_on_a_terminal(workdir: Path, answers: list[bytes]) -> tuple[int, str, int]:
    """Run the demo on a pseudo-terminal without --yes, answering its y/N prompts with
    ``answers`` in order (then y). Returns the exit code, the output and the prompts seen."""
    import pty
    import select
    import time

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PYTEST_"))}
    env["NO_COLOR"] = "1"
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "demo", "--workdir", str(workdir)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        close_fds=True,
    )
    os.close(follower)
    output = b""
    answered = 0
    deadline = time.monotonic() + DEMO_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                output += chunk
                while output.count(b"allow? [y/N]") > answered:
                    os.write(
                        leader, (answers[answered] if answered < len(answers) else b"y") + b"\n"
                    )
                    answered += 1
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=DEMO_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
    return code, output.decode("utf-8", "replace"), answered


def test_demo_on_a_terminal_asks_and_applies_the_answers(tmp_path: Path) -> None:
    """On a TTY without --yes every permission prompt is a y/N question; answering y each
    time fixes the bug."""
    workdir = tmp_path / "demo"
    code, text_out, answered = _demo_on_a_terminal(workdir, [])
    assert code == 0, text_out
    assert answered == 3  # Bash (tests fail), Edit (with its diff), Bash (tests pass)
    assert "+    whole, _, cents = text.partition" in text_out  # the diff was shown
    assert "int(float(text) * 100)" not in (workdir / BUGGY_FILE).read_text()


def test_demo_rejecting_the_edit_gets_an_answer_not_an_http_error(tmp_path: Path) -> None:
    """Saying n to the Edit: the scripted model answers the rejection and stops (no HTTP 400
    from the scripted server), the file is left alone, the demo says why and fails because
    the tests still fail."""
    workdir = tmp_path / "demo"
    code, text_out, answered = _demo_on_a_terminal(workdir, [b"y", b"n"])
    assert code == 1, text_out
    assert answered == 2  # Bash (allowed), Edit (rejected); nothing asked after that
    assert "HTTP 400" not in text_out and "prompt request failed" not in text_out
    assert "Understood: I won't do that." in text_out
    assert "turn ended: stopReason=end_turn" in text_out
    assert "you rejected 1 tool call(s), so the agent stopped" in text_out
    assert "did not go as written" not in text_out
    assert "demo failed: the tests still fail" in text_out
    assert "int(float(text) * 100)" in (workdir / BUGGY_FILE).read_text()


def test_demo_with_an_api_key_uses_the_configured_endpoint(tmp_path: Path) -> None:
    """With ANTHROPIC_API_KEY set the demo talks to ANTHROPIC_BASE_URL (here the scripted
    server, standing in for the API) instead of starting its bundled one."""
    from importlib import resources

    from lsp_agent.testing.scenario import load_scenario
    from lsp_agent.testing.scripted import scripted_env
    from lsp_agent.testing.thread import ScriptedServerThread

    workdir = (tmp_path / "demo").resolve()
    scenario = load_scenario(str(resources.files("lsp_agent.demo").joinpath("scenario.json")))
    variables = {"cwd": str(workdir), **scenario_variables(buggy_file=BUGGY_FILE, verified=True)}
    with ScriptedServerThread(scenario=scenario, variables=variables) as server:
        env = scripted_env(server.base_url, model="claude-demo-test")
        env = {k: v for k, v in env.items() if not k.startswith("PYTEST_")}
        proc = subprocess.run(
            [sys.executable, "-m", "lsp_agent", "demo", "--yes", "--workdir", str(workdir)],
            env=env,
            capture_output=True,
            text=True,
            timeout=DEMO_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        server.assert_done()
        models = {body.get("model") for body in server.requests}
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert OFFLINE_NOTICE not in proc.stdout
    assert "model: Claude (claude-demo-test)" in proc.stdout
    assert models == {"claude-demo-test"}


def test_without_ruff_the_demo_says_so_and_runs_unverified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ruff next to the interpreter nor on PATH: a notice, no diagnostics settings sent, and
    the scripted run still plays exactly (without the verification it would have claimed)."""
    import io

    monkeypatch.setattr(verification, "find_ruff", lambda: None)
    for name in [n for n in os.environ if n.startswith(("ANTHROPIC_", "PYTEST_"))]:
        monkeypatch.delenv(name)
    out = io.StringIO()
    workdir = tmp_path / "demo"
    code = runner.run_demo(DemoOptions(yes=True, offline=True, workdir=workdir), out=out)
    text_out = out.getvalue()
    assert code == 0, text_out
    assert "verification unavailable: no ruff next to" in text_out
    assert "Checking diagnostics" not in text_out
    assert "ruff reports" not in text_out
    assert "All 11 tests pass; your unsaved comment" in text_out
    assert text_out.rstrip().endswith("demo finished: the tests pass")


def test_a_demo_in_a_temporary_project_saves_no_session(tmp_path: Path) -> None:
    """The temporary project is deleted at the end: no saved session may point at it."""
    data, temp = tmp_path / "data", tmp_path / "tmp"
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PYTEST_"))}
    env.update({"LSP_AGENT_DATA_DIR": str(data), "TMPDIR": str(temp)})
    proc = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "demo", "--yes", "--offline"],
        env=env,
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(data.rglob("*.jsonl")) == []
    assert list(temp.iterdir()) == []  # the project and the demo's own data folder are gone
