"""The offline trial model (`serve --offline`): its rules as a pure function of the request,
and the same through the real SDK against the scripted server playing it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsp_agent.demo.trial import (
    CLI_SIGNATURE,
    SIGNATURE,
    describe,
    file_lines,
    respond,
    target_file,
    trial_endpoint,
    trial_model_factory,
    two_hunk_edit,
)
from lsp_agent.model.background import complete_text
from lsp_agent.model.types import Message, ModelRequest, ResponseDone, TextDelta, ToolUseStart
from lsp_agent.sessions.titles import clean_title, title_request
from lsp_agent.testing.scenario import ScriptedText, ScriptedToolUse

SYSTEM = [{"type": "text", "text": "You are a coding agent.\nWorking directory: /home/dev/calc"}]


def _body(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "system": SYSTEM, "messages": list(messages)}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _call(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
    return {"role": "assistant", "content": [block]}


def _result(tool_id: str, text: str, *, is_error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": is_error}
    return {"role": "user", "content": [block]}


def _tool(content: list[Any]) -> tuple[str, dict[str, Any]]:
    uses = [b for b in content if isinstance(b, ScriptedToolUse)]
    assert len(uses) == 1, content
    return uses[0].name, uses[0].input


def _text(content: list[Any]) -> str:
    return "".join(b.text for b in content if isinstance(b, ScriptedText))


def test_target_file_from_resource_mention_or_path() -> None:
    assert target_file('hi\n<resource path="/p/a.py (lines 2-4)">\nx\n</resource>') == "/p/a.py"
    assert target_file("what does @src/app.ts do?") == "src/app.ts"
    assert target_file("explain calc.py.") == "calc.py"
    assert target_file("hello there") is None


def test_a_question_reads_the_file_then_describes_it() -> None:
    first = respond(_body(_user("What does @calc.py do?")))
    name, tool_input = _tool(list(first.content))
    assert (name, tool_input) == ("Read", {"file_path": "/home/dev/calc/calc.py"})
    read_output = "1\tdef add(a, b):\n2\t    return a + b\n"
    answer = respond(
        _body(
            _user("What does @calc.py do?"),
            _call("t1", "Read", tool_input),
            _result("t1", read_output),
        )
    )
    text = _text(list(answer.content))
    assert "`calc.py` has 2 lines. It defines `add`." in text
    assert text.endswith(SIGNATURE)


def test_memory_reminders_in_front_of_the_prompt_are_not_the_question() -> None:
    memory = (
        "<system-reminder>\nContents of /home/dev/.claude/CLAUDE.md:\nBe brief.\n</system-reminder>"
    )
    message = {
        "role": "user",
        "content": [{"type": "text", "text": memory}, {"type": "text", "text": "Explain calc.py"}],
    }
    name, tool_input = _tool(list(respond(_body(message)).content))
    assert (name, tool_input) == ("Read", {"file_path": "/home/dev/calc/calc.py"})


def test_an_edit_has_two_hunks_far_enough_apart() -> None:
    lines = [f"line {n}" for n in range(1, 15)]
    edit = two_hunk_edit("/p/a.lua", lines)
    assert edit is not None
    assert edit["old_string"] == "\n".join(lines[:10])
    new = edit["new_string"].split("\n")
    assert new[0].startswith("-- Reviewed with") and new[11].startswith("-- (The trial")
    assert two_hunk_edit("/p/a.py", []) is None
    assert file_lines("     1\ta\n     2\t\n     3\tb") == ["a", "", "b"]


def test_a_rejection_is_answered_politely() -> None:
    answer = respond(
        _body(
            _user("run `rm -rf build`"),
            _call("t1", "Bash", {"command": "rm -rf build"}),
            _result("t1", "The user rejected this tool call; it did not run.", is_error=True),
        )
    )
    assert answer.stop_reason is None and not any(
        isinstance(b, ScriptedToolUse) for b in answer.content
    )
    assert "OK, I won't. The Bash call did not run and nothing was changed." in _text(
        list(answer.content)
    )


def test_without_a_file_it_says_what_it_can_do() -> None:
    text = _text(list(respond(_body(_user("hello"))).content))
    assert "@file" in text and "run `ls`" in text
    assert "has 0 lines" in describe("/p/empty.py", [])


async def test_through_the_sdk_on_the_trial_endpoint() -> None:
    with trial_endpoint() as base_url:
        model = trial_model_factory(base_url)()
        request = ModelRequest(
            model="lsp-agent-offline-trial",
            system=("Working directory: /w",),
            messages=(Message.user_text("run `echo hi`"),),
        )
        events = [event async for event in model.stream(request)]
        await model.aclose()
    starts = [e for e in events if isinstance(e, ToolUseStart)]
    assert [s.name for s in starts] == ["Bash"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "I'll run `echo hi`."
    assert isinstance(events[-1], ResponseDone)


async def test_the_trial_model_names_a_session_in_the_background() -> None:
    with trial_endpoint() as base_url:
        model = trial_model_factory(base_url)()
        request = title_request("lsp-agent-offline-trial", "run `ls` in the project please")
        result = await complete_text(model, request.model_copy(update={"background": "title"}))
        await model.aclose()
    assert result.text == "Trial: run `ls` in the project"
    assert clean_title(result.text) == "Trial: run `ls` in the project"


def test_a_summary_request_gets_a_short_summary() -> None:
    answer = respond(_body(_user("edit calc.py"), _user("CONTEXT CHECKPOINT. Summarise.")))
    assert _text(list(answer.content)).startswith("1. Goal:")


def test_sentence_punctuation_ends_a_mention_unless_the_file_has_it(tmp_path: Path) -> None:
    assert target_file("What is in @main.py?") == "main.py"
    assert target_file("Look at @src/app.ts! Now.") == "src/app.ts"
    assert target_file("(see @calc.py)") == "calc.py"
    (tmp_path / "odd?").write_text("x\n")
    assert target_file("What is @odd?", cwd=str(tmp_path)) == "odd?"  # it exists: kept whole
    assert target_file("What is @main.py?", cwd=str(tmp_path)) == "main.py"
    first = respond(_body(_user("What is in @main.py?")))
    assert _tool(list(first.content)) == ("Read", {"file_path": "/home/dev/calc/main.py"})


def test_run_p_wording_fits_the_command_line() -> None:
    """Answers in ``run -p --offline`` name flags and commands, not buffers and servers."""
    edited = respond(
        _body(
            _user("edit @calc.py"),
            _call("toolu_1", "Edit", {"file_path": "/home/dev/calc/calc.py"}),
            _result("toolu_1", "updated"),
        ),
        door="cli",
    )
    text = _text(list(edited.content))
    assert "written to disk" in text and "lsp-agent rewind" in text
    assert text.endswith(CLI_SIGNATURE) and "--offline" in CLI_SIGNATURE
    idle = _text(list(respond(_body(_user("hello")), door="cli").content))
    assert "--permission-mode acceptEdits" in idle and "--allowedTools Bash" in idle
    described = describe("/p/a.py", ["x = 1"], door="cli")
    for editor_word in ("buffer", "restart the server", ":AgentAsk", "review"):
        assert editor_word not in text + idle + described


def test_an_mcp_resource_mention_is_not_a_file_to_read() -> None:
    attached = (
        "Summarise @weather:notes://today\n\n"
        '<mcp-resource server="weather" uri="notes://today">\nsunny, see a.py\n</mcp-resource>'
    )
    assert target_file(attached) is None
    assert target_file("Compare @weather:notes://today with @calc.py") == "calc.py"
    assert target_file("what is in @C:/src/app.py?") == "C:/src/app.py"


def test_the_description_ends_its_sentences_and_the_offer_is_its_own_paragraph() -> None:
    described = describe("/p/main.py", ["from calc import add, mean", "print(add(1, 2))"])
    assert "It starts with `from calc import add, mean`.\n\nAsk me to *edit* it" in described
    cli = describe("/p/main.py", ["x = 1"], door="cli")
    # `ls` is read-only: it runs without --allowedTools, which only commands that change need.
    assert "run `ls`; one that changes files needs --allowedTools Bash" in cli


async def test_a_trial_title_cut_inside_a_code_span_closes_it() -> None:
    with trial_endpoint() as base_url:
        model = trial_model_factory(base_url)()
        request = title_request("lsp-agent-offline-trial", "run `sleep 60 && touch x` now")
        result = await complete_text(model, request.model_copy(update={"background": "title"}))
        await model.aclose()
    assert result.text == "Trial: run `sleep 60 && touch`"


def test_an_mcp_tool_named_in_the_prompt_is_called_and_its_text_shown() -> None:
    body = _body(_user("Show me the red_square please"))
    body["tools"] = [
        {"name": "Read", "input_schema": {"type": "object", "required": ["file_path"]}},
        {"name": "mcp__pics__red_square", "input_schema": {"type": "object"}},
        {"name": "mcp__pics__resize", "input_schema": {"type": "object", "required": ["w"]}},
    ]
    name, tool_input = _tool(list(respond(body).content))
    assert (name, tool_input) == ("mcp__pics__red_square", {})
    done = _body(
        _user("Show me the red_square please"),
        _call("toolu_1", "mcp__pics__red_square", {}),
        _result("toolu_1", "[image (png, 73 bytes)]"),
    )
    assert "returned:\n\n```\n[image (png, 73 bytes)]\n```" in _text(list(respond(done).content))


def test_an_attached_mcp_resource_is_summarised() -> None:
    attached = (
        "Summarise @pics:notes://todo\n\n"
        '<mcp-resource server="pics" uri="notes://todo">\n1. fix mean\n2. add median\n'
        "</mcp-resource>"
    )
    text = _text(list(respond(_body(_user(attached))).content))
    assert "`pics:notes://todo` says:\n\n```\n1. fix mean\n2. add median\n```" in text
    missing = '@pics:notes://nope\n\n<mcp-resource server="pics" uri="notes://nope" error="gone" />'
    assert "`pics:notes://nope` could not be read: gone" in _text(
        list(respond(_body(_user(missing))).content)
    )
