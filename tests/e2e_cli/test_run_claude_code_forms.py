"""``lsp-agent -p`` as Claude Code users type it: the command-line forms, piped stdin, the
print-mode flags, and the fields of the stream and result objects."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.scenario import (
    Scenario,
    ToolResultExpect,
    expecting,
    reply,
    scenario,
    text,
    tool_use,
)
from tests.e2e_cli.conftest import CALC, cli_env, run_cli

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def say_hi(expect_user: str = "Say hi") -> Scenario:
    return scenario(reply("Hi!", expect=expecting(last_user_contains=expect_user)), name="hi")


@pytest.mark.parametrize(
    "args",
    [
        ["-p", "--output-format", "json", "Say hi"],
        ["--output-format", "json", "-p", "Say hi"],
        ["run", "-p", "--output-format", "json", "Say hi"],
        ["run", "-p", "Say hi", "--output-format", "json"],
        ["--print", "Say hi", "--output-format", "json"],
    ],
    ids=["top-level", "flags-first", "run-claude-order", "run-prompt-first", "long-flag"],
)
def test_every_form_of_the_command_line_runs(project: Path, args: list[str]) -> None:
    result = run_cli(args, scenario=say_hi(), cwd=project)
    assert result.code == 0, result.proc.stderr
    obj = json.loads(result.proc.stdout)
    assert (obj["type"], obj["subtype"], obj["result"]) == ("result", "success", "Hi!")
    assert UUID.match(obj["session_id"]), obj["session_id"]
    result.server.assert_done()


def test_help_after_p_shows_the_run_help(project: Path) -> None:
    result = run_cli(["run", "-p", "--help"], scenario=scenario(name="none"), cwd=project)
    assert result.code == 0
    assert "--append-system-prompt" in result.proc.stdout


def test_piped_stdin_is_joined_with_the_prompt(project: Path) -> None:
    piped = CALC
    result = run_cli(
        ["-p", "Explain this"],
        scenario=scenario(
            reply(
                "It subtracts.",
                expect=expecting(last_user_contains="Explain this\n\ndef add(a, b):\n"),
            )
        ),
        cwd=project,
        stdin_text=piped,
    )
    assert result.code == 0, result.proc.stderr
    assert result.proc.stdout == "It subtracts.\n"
    result.server.assert_done()


def test_piped_stdin_alone_is_the_prompt(project: Path) -> None:
    result = run_cli(
        ["-p"], scenario=say_hi("Say hi from a pipe"), cwd=project, stdin_text="Say hi from a pipe"
    )
    assert result.code == 0, result.proc.stderr
    result.server.assert_done()


def test_no_prompt_at_all_is_a_usage_error(project: Path) -> None:
    result = run_cli(["-p"], scenario=scenario(name="none"), cwd=project)
    assert result.code == 2
    assert "no prompt" in result.proc.stderr


def test_system_prompt_flags(project: Path) -> None:
    result = run_cli(
        ["-p", "--append-system-prompt", "Always answer in French.", "Say hi"],
        scenario=scenario(
            reply("Salut !", expect=expecting(system_contains="Always answer in French."))
        ),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    (body,) = result.server.requests
    system = json.dumps(body["system"])
    assert "Always answer in French." in system and "<env>" in system

    result = run_cli(
        ["-p", "--system-prompt", "You are a terse reviewer.", "Say hi"],
        scenario=scenario(reply("Hi.", expect=expecting(system_contains="terse reviewer"))),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    (body,) = result.server.requests
    assert "<env>" not in json.dumps(body["system"]), "the built-in prompt was replaced"


def read_other(other: Path, *, is_error: bool) -> Scenario:
    return scenario(
        reply(tool_use("Read", {"file_path": f"{other}/notes.txt"}, id="toolu_read")),
        reply(
            "Read it." if not is_error else "Could not read it.",
            expect=expecting(tool_results=[ToolResultExpect(is_error=is_error)]),
        ),
    )


def test_add_dir_lets_the_agent_work_in_another_directory(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("remember the milk\n")
    denied = run_cli(
        ["-p", "read the notes"], scenario=read_other(other, is_error=True), cwd=project
    )
    assert denied.code == 0, denied.proc.stderr
    denied.server.assert_done()
    allowed = run_cli(
        ["-p", "--add-dir", str(other), "--", "read the notes"],
        scenario=read_other(other, is_error=False),
        cwd=project,
    )
    assert allowed.code == 0, allowed.proc.stderr
    allowed.server.assert_done()
    missing = run_cli(
        ["-p", "--add-dir", str(tmp_path / "missing"), "--", "x"],
        scenario=scenario(name="none"),
        cwd=project,
    )
    assert missing.code == 2 and "is not a directory" in missing.proc.stderr


def edit_calc(*, allowed: bool) -> Scenario:
    return scenario(
        reply(
            tool_use("Read", {"file_path": "{{cwd}}/calc.py"}, id="toolu_read"),
            tool_use(
                "Edit",
                {
                    "file_path": "{{cwd}}/calc.py",
                    "old_string": "return a - b",
                    "new_string": "return a + b",
                },
                id="toolu_edit",
            ),
        ),
        reply(
            "Done." if allowed else "I was not allowed to edit.",
            expect=expecting(
                tool_results=[
                    ToolResultExpect(is_error=False),
                    ToolResultExpect(is_error=not allowed),
                ]
            ),
        ),
    )


def test_dangerously_skip_permissions_runs_everything(project: Path) -> None:
    result = run_cli(
        ["-p", "--dangerously-skip-permissions", "--output-format", "stream-json", "fix add"],
        scenario=edit_calc(allowed=True),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    assert result.events()[0]["permissionMode"] == "bypassPermissions"
    assert "return a + b" in (project / "calc.py").read_text()


def test_dont_ask_denies_and_text_mode_says_so_on_stderr(project: Path) -> None:
    result = run_cli(
        ["-p", "--permission-mode", "dontAsk", "fix add"],
        scenario=edit_calc(allowed=False),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    assert result.proc.stdout == "I was not allowed to edit.\n"
    assert "1 tool call denied" in result.proc.stderr
    # The line is the rule that allows the call, as the tool's refusal names it (//abs).
    assert f"denied: Edit(/{project}/calc.py)" in result.proc.stderr
    assert (project / "calc.py").read_text() == CALC
    result.server.assert_done()


def test_stream_objects_carry_claude_codes_fields(project: Path) -> None:
    result = run_cli(
        ["-p", "--output-format", "stream-json", "--permission-mode", "acceptEdits", "fix"],
        scenario=edit_calc(allowed=True),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    events = result.events()
    init = events[0]
    assert UUID.match(init["session_id"])
    assert "compact" in init["slash_commands"]
    assistants = [e for e in events if e["type"] == "assistant"]
    first = assistants[0]["message"]
    assert first["id"] == "msg_scripted_0"
    assert (first["type"], first["role"], first["stop_reason"]) == (
        "message",
        "assistant",
        "tool_use",
    )
    assert first["model"] and first["usage"]["output_tokens"] > 0
    assert assistants[-1]["message"]["stop_reason"] == "end_turn"
    progress = [e for e in events if e["type"] == "tool_progress"]
    assert progress and all(
        {"status", "title", "output", "tool_use_id", "tool_name"} <= e.keys() for e in progress
    )
    last = events[-1]
    assert (last["type"], last["stop_reason"]) == ("result", "end_turn")
    assert {e["session_id"] for e in events} == {init["session_id"]}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_failed_run_has_no_stop_reason_and_no_api_time(project: Path) -> None:
    env = cli_env(f"http://127.0.0.1:{closed_port()}")
    result = run_cli(
        ["-p", "--output-format", "json", "Say hi"],
        scenario=scenario(name="none"),
        cwd=project,
        env=env,
    )
    assert result.code == 1
    obj = json.loads(result.proc.stdout)
    assert (obj["subtype"], obj["is_error"], obj["stop_reason"]) == (
        "error_during_execution",
        True,
        None,
    )
    assert obj["duration_api_ms"] == 0
    assert "Cannot reach the model endpoint" in obj["errors"][0]


def test_input_format_stream_json_runs_one_turn_per_message(project: Path) -> None:
    lines = [
        {"type": "user", "message": {"role": "user", "content": "first question"}},
        {"type": "keep_alive"},
        {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": "second one"}]},
        },
    ]
    result = run_cli(
        ["-p", "--input-format", "stream-json", "--output-format", "stream-json"],
        scenario=scenario(
            reply("One.", expect=expecting(last_user_contains="first question")),
            reply("Two.", expect=expecting(last_user_contains="second one")),
        ),
        cwd=project,
        stdin_text="".join(json.dumps(line) + "\n" for line in lines),
    )
    assert result.code == 0, result.proc.stderr
    events = result.events()
    results = [e for e in events if e["type"] == "result"]
    assert [r["result"] for r in results] == ["One.", "Two."]
    assert not [e for e in events if e["type"] == "user"], "the input is not echoed"
    assert "ignored a message of type 'keep_alive'" in result.proc.stderr
    result.server.assert_done()


def test_input_format_stream_json_rejects_a_line_that_is_not_json(project: Path) -> None:
    result = run_cli(
        ["-p", "--input-format", "stream-json", "--output-format", "stream-json"],
        scenario=scenario(name="none"),
        cwd=project,
        stdin_text="{not json\n",
    )
    assert result.code == 2
    last: dict[str, Any] = result.events()[-1]
    assert last["type"] == "result" and "stdin line 1: not JSON" in last["errors"][0]


def test_include_partial_messages_streams_the_model_events(project: Path) -> None:
    result = run_cli(
        ["-p", "--output-format", "stream-json", "--include-partial-messages", "Say hi"],
        scenario=scenario(reply(text("Hi!"))),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    events = result.events()
    kinds = [e["event"]["type"] for e in events if e["type"] == "stream_event"]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert "content_block_delta" in kinds
    first_assistant = next(i for i, e in enumerate(events) if e["type"] == "assistant")
    last_partial = max(i for i, e in enumerate(events) if e["type"] == "stream_event")
    assert last_partial < first_assistant
    usage = run_cli(
        ["-p", "--include-partial-messages", "Say hi"], scenario=scenario(name="none"), cwd=project
    )
    assert usage.code == 2 and "needs --output-format stream-json" in usage.proc.stderr


def test_verbose_is_one_line_per_model_request(project: Path) -> None:
    result = run_cli(
        ["-p", "--verbose", "--permission-mode", "acceptEdits", "fix add"],
        scenario=edit_calc(allowed=True),
        cwd=project,
    )
    assert result.code == 0, result.proc.stderr
    model_lines = [ln for ln in result.proc.stderr.splitlines() if ln.startswith("[model]")]
    assert len(model_lines) == 2, result.proc.stderr
    assert re.match(
        r"\[model\] #1 \S+: 200 tool_use · [\d,]+ in \(0 cached\) / [\d,]+ out tokens · [\d,]+ ms$",
        model_lines[0],
    ), model_lines
    assert "anthropic._base_client" not in result.proc.stderr
    assert "[tool] Edit" in result.proc.stderr
    assert len(result.proc.stderr) < 4000, "no request bodies in the log"
    # The permission decisions are log records: they read as the run's other lines, not as
    # "INFO lsp_agent.agent.approval: ...".
    lines = result.proc.stderr.splitlines()
    # In the user's words: what decided, not the decision's fields (rule=None source=mode).
    assert (
        "lsp-agent: permission allow for Edit (acceptEdits mode: edits inside the workspace; "
        "no rule matched; the permission mode decided)"
    ) in lines, lines
    odd = [ln for ln in lines if not ln.startswith(("[model] ", "[tool] ", "lsp-agent: "))]
    assert odd == [], odd


def test_prompt_starting_like_a_flag_after_double_dash(project: Path) -> None:
    result = run_cli(["-p", "--", "-v means verbose?"], scenario=say_hi("-v means"), cwd=project)
    assert result.code == 0, result.proc.stderr


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--add-dir", ".", "Fix it"], "--add-dir takes several values"),
        (["--allowedTools", "Read", "Fix it"], "--allowedTools takes several values"),
        (["-r", "/context"], "--resume took '/context' as the session id"),
    ],
)
def test_a_flag_that_took_the_prompt_is_named(project: Path, flags: list[str], named: str) -> None:
    """Flags with several values read on past the prompt (as Claude Code's do): the usage
    error says which one may have taken it instead of a bare "no prompt"."""
    result = run_cli(["-p", *flags], scenario=scenario(name="none"), cwd=project)
    assert result.code == 2
    assert "no prompt" in result.proc.stderr and named in result.proc.stderr
    assert result.server.requests == []
