"""``lsp-agent run -p``: the three output formats on a real read-and-edit turn."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, text, tool_use
from tests.e2e_cli.conftest import run_cli

FIXED = "def add(a, b):\n    return a + b\n"


def fix_add() -> object:
    return scenario(
        reply(
            text("Let me read it."),
            tool_use("Read", {"file_path": "{{cwd}}/calc.py"}, id="toolu_read"),
            expect=expecting(tools_include=["Read", "Edit"], last_user_contains="fix add"),
        ),
        reply(
            tool_use(
                "Edit",
                {
                    "file_path": "{{cwd}}/calc.py",
                    "old_string": "return a - b",
                    "new_string": "return a + b",
                },
                id="toolu_edit",
            ),
            expect=expecting(tool_results=[ToolResultExpect(is_error=False, contains="a - b")]),
        ),
        reply(
            "Fixed: add() subtracted.",
            expect=expecting(tool_results=[ToolResultExpect(is_error=False)]),
        ),
        name="fix_add",
    )


ARGS = ["run", "-p", "fix add", "--permission-mode", "bypassPermissions"]


def test_text_output_is_the_final_answer(project: Path) -> None:
    result = run_cli(ARGS, scenario=fix_add(), cwd=project)
    assert result.code == 0, result.proc.stderr
    assert result.proc.stdout == "Fixed: add() subtracted.\n"
    assert (project / "calc.py").read_text() == FIXED
    result.server.assert_done()


def test_json_output_is_one_result_object(project: Path) -> None:
    result = run_cli([*ARGS, "--output-format", "json"], scenario=fix_add(), cwd=project)
    assert result.code == 0, result.proc.stderr
    obj = json.loads(result.proc.stdout)
    assert obj["type"] == "result"
    assert obj["subtype"] == "success"
    assert obj["is_error"] is False
    assert obj["result"] == "Fixed: add() subtracted."
    assert obj["num_turns"] == 3
    assert obj["stop_reason"] == "end_turn"
    assert obj["usage"]["input_tokens"] > 0 and obj["usage"]["output_tokens"] > 0
    assert obj["duration_ms"] >= obj["duration_api_ms"] >= 0
    assert obj["permission_denials"] == []
    assert isinstance(obj["session_id"], str) and obj["session_id"]
    result.server.assert_done()


def test_stream_json_events(project: Path) -> None:
    result = run_cli([*ARGS, "--output-format", "stream-json"], scenario=fix_add(), cwd=project)
    assert result.code == 0, result.proc.stderr
    events = result.events()
    init, last = events[0], events[-1]
    assert (init["type"], init["subtype"]) == ("system", "init")
    assert init["cwd"] == str(project)
    assert init["tools"] == ["Read", "Edit", "Write", "Glob", "Grep", "Bash"]
    assert init["permissionMode"] == "bypassPermissions"
    assert (last["type"], last["subtype"], last["result"]) == (
        "result",
        "success",
        "Fixed: add() subtracted.",
    )
    messages = [e for e in events if e["type"] in ("assistant", "user")]
    assert [m["type"] for m in messages] == ["assistant", "user", "assistant", "user", "assistant"]
    first = messages[0]["message"]["content"]
    assert first[0] == {"type": "text", "text": "Let me read it."}
    assert (first[1]["type"], first[1]["name"], first[1]["id"]) == (
        "tool_use",
        "Read",
        "toolu_read",
    )
    read_result = messages[1]["message"]["content"][0]
    assert read_result["tool_use_id"] == "toolu_read" and "a - b" in read_result["content"]
    # Every tool's progress ends in "completed", after its tool_use was shown.
    for tool_id in ("toolu_read", "toolu_edit"):
        positions = [i for i, e in enumerate(events) if e.get("tool_use_id") == tool_id]
        use_at = next(
            i
            for i, e in enumerate(events)
            if e["type"] == "assistant"
            and any(b.get("id") == tool_id for b in e["message"]["content"])
        )
        assert positions and min(positions) > use_at
        statuses = [events[i]["status"] for i in positions if "status" in events[i]]
        assert statuses[-1] == "completed"
    assert all(e["session_id"] == init["session_id"] for e in events)
    assert result.proc.stderr == ""
    result.server.assert_done()


def test_prompt_from_stdin(project: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    from lsp_agent.testing.thread import ScriptedServerThread
    from tests.e2e_cli.conftest import RUN_TIMEOUT_S, cli_env

    with ScriptedServerThread(scenario=fix_add(), variables={"cwd": str(project)}) as server:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "lsp_agent",
                "run",
                "-p",
                "-",
                "--permission-mode",
                "bypassPermissions",
            ],
            input="please fix add()",
            cwd=project,
            env=cli_env(server.base_url),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert (project / "calc.py").read_text() == FIXED
