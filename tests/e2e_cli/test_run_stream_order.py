"""``lsp-agent run -p --output-format stream-json``: a batch's ``user`` tool_result line is
written as soon as the tools are done, before the model's next answer (as Claude Code does),
not when that answer starts arriving.

The scripted model holds its second answer behind a gate that the test opens only after it
has read the tool_result line from the CLI's stdout: a CLI that waits for the next answer to
write the line never gets it, and the test's read times out."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

import pytest

from lsp_agent.testing.scenario import Scenario, expecting, reply, scenario, text, tool_use
from lsp_agent.testing.thread import ScriptedServerThread
from tests.e2e_cli.conftest import RUN_TIMEOUT_S, cli_env


def held_second_answer() -> Scenario:
    """Two read-only calls in one answer (run side by side), then an answer behind a gate."""
    return scenario(
        reply(
            text("Looking."),
            tool_use("Read", {"file_path": "{{cwd}}/calc.py"}, id="toolu_read"),
            tool_use("Glob", {"pattern": "*.py"}, id="toolu_glob"),
        ),
        reply(
            "add() subtracts.",
            expect=expecting(last_user_contains="calc.py"),
            gate="second answer",
        ),
        name="held_second_answer",
    )


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _next_event(
    lines: queue.Queue[str | None], waiting_for: str, seen: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The next stdout event (``None`` at end of output); fails the test when none comes
    within the run's bound (the CLI is holding the line back), naming the events ``seen``."""
    try:
        line = lines.get(timeout=RUN_TIMEOUT_S)
    except queue.Empty:
        kinds = [e["type"] for e in seen]
        pytest.fail(f"stdout stayed silent while waiting for {waiting_for}; seen: {kinds}")
    return None if line is None else json.loads(line)


def _is_tool_results(event: dict[str, Any]) -> bool:
    content = event["message"]["content"] if event["type"] == "user" else []
    return any(block.get("type") == "tool_result" for block in content)


@pytest.mark.parametrize("partial", [False, True], ids=["messages", "partial-messages"])
def test_tool_results_are_written_before_the_next_answer(project: Path, partial: bool) -> None:
    args = ["run", "-p", "what does add do?", "--output-format", "stream-json"]
    if partial:
        args.append("--include-partial-messages")
    server = ScriptedServerThread(scenario=held_second_answer(), variables={"cwd": str(project)})
    base_url = server.start()
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", *args],
            cwd=project,
            env=cli_env(base_url),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        assert proc.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
        try:
            before: list[dict[str, Any]] = []
            while not before or not _is_tool_results(before[-1]):
                event = _next_event(lines, "the tool_result line (the next answer is held)", before)
                assert event is not None, "stdout ended before the tool_result line"
                before.append(event)
            server.open_gate("second answer")
            after: list[dict[str, Any]] = []
            while (event := _next_event(lines, "the run's end", after)) is not None:
                after.append(event)
            assert proc.wait(timeout=RUN_TIMEOUT_S) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            server.stop()
        err.seek(0)
        stderr = err.read()
    assert server.failures == [], stderr
    server.assert_done()

    # Before the gate opened: the first answer, both calls' progress, then their results.
    kinds = [e["type"] for e in before if e["type"] != "stream_event"]
    assert kinds[0] == "system" and kinds[-1] == "user", kinds
    assistant = next(e for e in before if e["type"] == "assistant")
    uses = [b["id"] for b in assistant["message"]["content"] if b["type"] == "tool_use"]
    assert uses == ["toolu_read", "toolu_glob"]
    position = {id(e): i for i, e in enumerate(before)}
    for use in uses:
        done = [
            e
            for e in before
            if e["type"] == "tool_progress"
            and e["tool_use_id"] == use
            and e["status"] == "completed"
        ]
        assert len(done) == 1, (use, kinds)
        assert position[id(assistant)] < position[id(done[0])] < len(before) - 1
    results = [b["tool_use_id"] for b in before[-1]["message"]["content"]]
    assert results == uses
    # With partial messages, the first answer's stream events (only) came before its message.
    streamed = [e for e in before if e["type"] == "stream_event"]
    assert bool(streamed) == partial
    assert all(position[id(e)] < position[id(assistant)] for e in streamed)

    # After it: the second answer (its stream events first) and the result.
    kinds = [e["type"] for e in after]
    expected = ["assistant", "result"]
    assert [k for k in kinds if k != "stream_event"] == expected, kinds
    if partial:
        assert kinds[0] == "stream_event" and kinds[0 : kinds.index("assistant")] == [
            "stream_event"
        ] * kinds.index("assistant")
    assert after[-1]["result"] == "add() subtracts."
