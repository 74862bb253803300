"""Permission prompts over LSP: the request carries the call and the reason, a refused command
does not run, "allow always" is honoured for the rest of the session, and — once the door keeps
settings — an "always" answer saved to the project is honoured by the next server."""

from __future__ import annotations

from typing import Any

from lsp_agent.testing.scenario import ToolResultExpect, expecting, reply, scenario, tool_use

from .conftest import Launch


def _touch_twice() -> Any:
    return scenario(
        reply(tool_use("Bash", {"command": "touch made.txt"}, id="toolu_1")),
        reply(
            tool_use("Bash", {"command": "touch made.txt"}, id="toolu_2"),
            expect=expecting(tool_results=[ToolResultExpect(is_error=False)]),
        ),
        reply("done", expect=expecting(tool_results=[ToolResultExpect(is_error=False)])),
    )


async def test_refused_command_does_not_run_and_the_model_hears_why(launch: Launch) -> None:
    editor = await launch(
        scenario(
            reply(tool_use("Bash", {"command": "touch sentinel.txt"}, id="toolu_1")),
            reply(
                "ok",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=True, contains="not today")]
                ),
            ),
        )
    )
    editor.permission = lambda _p: {
        "outcome": {"outcome": "selected", "optionId": "reject_once", "feedback": "not today"}
    }
    result = await editor.prompt(await editor.new_session(), "make a file")
    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    (request,) = editor.permission_requests
    assert request["toolCall"]["rawInput"] == {"command": "touch sentinel.txt"}
    assert "touch" in request["reason"]
    assert {o["kind"] for o in request["options"]} >= {"allow_once", "reject_once"}
    assert not (editor.root / "sentinel.txt").exists()


async def test_allow_always_is_honoured_for_the_rest_of_the_session(launch: Launch) -> None:
    editor = await launch(_touch_twice())
    editor.permission = lambda _p: {"outcome": {"outcome": "selected", "optionId": "allow_always"}}
    result = await editor.prompt(await editor.new_session(), "make a file twice")
    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert len(editor.permission_requests) == 1
    assert (editor.root / "made.txt").exists()


async def test_read_only_commands_do_not_prompt(launch: Launch) -> None:
    # Trusted: in an untrusted workspace git is not read-only (its repository config can name
    # programs to run), so `git status` would ask.
    editor = await launch(
        scenario(
            reply(tool_use("Bash", {"command": "ls -la && git status 2>/dev/null; pwd"}, id="t1")),
            reply("listed", expect=expecting(tool_results=[ToolResultExpect(is_error=False)])),
        ),
        init_options={"trusted": True},
    )
    result = await editor.prompt(await editor.new_session(), "look around")
    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert editor.permission_requests == []


async def test_allow_always_saved_to_the_project_is_honoured_by_the_next_server(
    launch: Launch,
) -> None:
    first = await launch(_touch_twice())

    def always_project(_params: dict[str, Any]) -> dict[str, Any]:
        return {"outcome": {"outcome": "selected", "optionId": "allow_always", "scope": "project"}}

    first.permission = always_project
    await first.prompt(await first.new_session(), "make a file twice")
    first.scripted.assert_done()
    (request,) = first.permission_requests
    assert request.get("suggestedRules") == ["Bash(touch made.txt)"]
    local = first.root / ".claude" / "settings.local.json"
    assert "Bash(touch made.txt)" in local.read_text()

    second = await launch(_touch_twice(), init_options={"trusted": True})
    await second.prompt(await second.new_session(), "again, in a new server")
    second.scripted.assert_done()
    assert second.permission_requests == []
