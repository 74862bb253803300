"""The agent loop on the real SDK against the scripted Messages-API server."""

from __future__ import annotations

import asyncio

from lsp_agent.agent.env import DEFAULT_MAX_MODEL_REQUESTS
from lsp_agent.agent.loop import CONTINUE_NUDGE, INTERRUPTED_MARKER
from lsp_agent.model.types import ToolResultBlock, ToolUseBlock
from lsp_agent.protocol.events import AgentMessageChunk, ToolCall, ToolCallUpdate, UsageUpdate
from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.testing.scenario import ToolResultExpect, error, expecting, reply, scenario, tool_use

from .conftest import HarnessFactory


def results_of(history: tuple[object, ...]) -> dict[str, ToolResultBlock]:
    out: dict[str, ToolResultBlock] = {}
    for message in history:
        for block in getattr(message, "content", ()):
            if isinstance(block, ToolResultBlock):
                out[block.tool_use_id] = block
    return out


def assert_consistent(history: tuple[object, ...]) -> None:
    """Every tool_use has exactly one tool_result, in the next message."""
    for i, message in enumerate(history):
        uses = [b.id for b in getattr(message, "content", ()) if isinstance(b, ToolUseBlock)]
        if not uses:
            continue
        following = history[i + 1]
        answered = [
            b.tool_use_id
            for b in following.content
            if isinstance(b, ToolResultBlock)  # type: ignore[attr-defined]
        ]
        assert answered == uses


async def test_text_turn_streams_chunks_and_ends(harness: HarnessFactory) -> None:
    h = await harness(
        scenario(reply("Hello ", "world.", expect=expecting(last_user_contains="hi")))
    )
    result = await h.session.prompt([PromptText(text="hi")])
    assert result.stop_reason == "end_turn"
    assert result.terminal == "completed"
    assert result.final_text == "Hello world."
    text = "".join(u.content.text for u in h.host.updates if isinstance(u, AgentMessageChunk))
    assert text == "Hello world."
    assert any(isinstance(u, UsageUpdate) for u in h.host.updates)
    assert [m.role for m in h.session.history] == ["user", "assistant"]
    h.server.assert_done()


async def test_parallel_safe_tools_run_together_and_results_keep_order(
    harness: HarnessFactory,
) -> None:
    h = await harness(
        scenario(
            reply(
                tool_use("Meet", {"name": "a"}, id="t1"),
                tool_use("Meet", {"name": "b"}, id="t2"),
                tool_use("Echo", {"text": "c"}, id="t3"),
            ),
            reply(
                "done",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=False, contains="met a"),
                        ToolResultExpect(is_error=False, contains="met b"),
                        ToolResultExpect(is_error=False, contains="echo: c"),
                    ]
                ),
            ),
        )
    )
    result = await h.session.prompt([PromptText(text="go")])
    assert result.stop_reason == "end_turn"
    h.server.assert_done()
    assert_consistent(h.session.history)


async def test_bad_tool_calls_become_error_results_and_the_turn_goes_on(
    harness: HarnessFactory,
) -> None:
    h = await harness(
        scenario(
            reply(
                tool_use("NoSuchTool", {}, id="u1"),
                tool_use("Echo", {"wrong": 1}, id="u2"),
                tool_use("Echo", id="u3", input_json='{"text": "unterminated'),
                tool_use("Boom", {}, id="u4"),
            ),
            reply(
                "recovered",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=True, contains="No such tool: 'NoSuchTool'"),
                        ToolResultExpect(is_error=True, contains="Invalid input for Echo"),
                        ToolResultExpect(is_error=True, contains="not valid JSON"),
                        ToolResultExpect(is_error=True, contains="kaboom"),
                    ]
                ),
            ),
        )
    )
    result = await h.session.prompt([PromptText(text="go")])
    assert result.final_text == "recovered"
    h.server.assert_done()


async def test_cancel_mid_tool_answers_every_tool_use_and_session_stays_usable(
    harness: HarnessFactory,
) -> None:
    h = await harness(
        scenario(
            reply(tool_use("Echo", {"text": "x"}, id="c1"), tool_use("Hang", {}, id="c2")),
            reply(
                "again",
                expect=expecting(last_user_contains="next"),
            ),
        )
    )
    hang = h.tools["Hang"]
    task = asyncio.create_task(h.session.prompt([PromptText(text="start")]))
    await asyncio.wait_for(hang.started.wait(), 10)  # type: ignore[attr-defined]
    h.session.cancel()
    result = await asyncio.wait_for(task, 10)
    assert result.stop_reason == "cancelled"
    assert hang.cancelled  # type: ignore[attr-defined]
    assert_consistent(h.session.history)
    results = results_of(h.session.history)
    assert results["c1"].content == "echo: x" and not results["c1"].is_error
    assert results["c2"].is_error and "Interrupted" in results["c2"].content
    assert not h.session.busy
    second = await h.session.prompt([PromptText(text="next")])
    assert second.final_text == "again"
    h.server.assert_done()


async def test_cancel_mid_stream_then_next_prompt_merges_user_messages(
    harness: HarnessFactory,
) -> None:
    h = await harness(
        scenario(
            reply("a long answer that never finishes " * 5, stall_after_events=4),
            reply("fresh", expect=expecting(last_user_contains="second")),
        )
    )
    task = asyncio.create_task(h.session.prompt([PromptText(text="first")]))
    for _ in range(200):
        if any(isinstance(u, AgentMessageChunk) for u in h.host.updates):
            break
        await asyncio.sleep(0.02)
    h.session.cancel()
    result = await asyncio.wait_for(task, 10)
    assert result.stop_reason == "cancelled"
    second = await h.session.prompt([PromptText(text="second")])
    assert second.final_text == "fresh"
    first_user = h.session.history[0]
    assert first_user.role == "user"
    assert INTERRUPTED_MARKER in first_user.text()
    assert "first" in first_user.text() and "second" in first_user.text()
    h.server.assert_done()


async def test_overloaded_then_success_is_retried(harness: HarnessFactory) -> None:
    h = await harness(scenario(error(529, "Overloaded", retry_after_s=0), reply("ok after retry")))
    result = await h.session.prompt([PromptText(text="hi")])
    assert result.final_text == "ok after retry"
    h.server.assert_done()


async def test_failing_endpoint_ends_turn_with_model_error_and_session_survives(
    harness: HarnessFactory,
) -> None:
    h = await harness(
        scenario(
            error(500, "boom", retry_after_s=0),
            error(500, "boom", retry_after_s=0),
            error(500, "boom", retry_after_s=0),
            reply("back"),
        )
    )
    result = await h.session.prompt([PromptText(text="hi")])
    assert result.terminal == "model_error"
    assert result.error is not None and "500" in result.error
    again = await h.session.prompt([PromptText(text="retry")])
    assert again.final_text == "back"
    h.server.assert_done()


async def test_max_tokens_escalates_once_then_nudges(harness: HarnessFactory) -> None:
    h = await harness(
        scenario(
            reply("cut", stop_reason="max_tokens"),
            reply(
                "cut again", stop_reason="max_tokens", expect=expecting(max_tokens_at_least=64000)
            ),
            reply("the end", expect=expecting(last_user_contains=CONTINUE_NUDGE[:40])),
        ),
        max_tokens=1000,
    )
    result = await h.session.prompt([PromptText(text="write a lot")])
    assert result.final_text == "the end"
    assert result.stop_reason == "end_turn"
    h.server.assert_done()


async def test_max_tokens_nudges_are_bounded(harness: HarnessFactory) -> None:
    h = await harness(
        scenario(
            reply("1", stop_reason="max_tokens"),
            reply("2", stop_reason="max_tokens"),
            reply("3", stop_reason="max_tokens"),
        ),
        max_tokens=1000,
        max_continue_nudges=1,
    )
    result = await h.session.prompt([PromptText(text="write a lot")])
    assert result.stop_reason == "max_tokens"
    h.server.assert_done()


async def test_max_turns_stops_with_consistent_history(harness: HarnessFactory) -> None:
    h = await harness(scenario(reply(tool_use("Echo", {"text": "1"}, id="m1"))), max_turns=1)
    result = await h.session.prompt([PromptText(text="go")])
    assert result.stop_reason == "max_turn_requests"
    assert_consistent(h.session.history)
    h.server.assert_done()


async def test_rejected_permission_reaches_model_with_feedback(harness: HarnessFactory) -> None:
    h = await harness(
        scenario(
            reply(tool_use("Bash", {"command": "rm -rf build"}, id="b1")),
            reply(
                "ok, not deleting",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=True, contains="keep the build")]
                ),
            ),
        )
    )

    async def answer(request: PermissionRequest) -> PermissionResponse:
        return PermissionResponse(
            outcome="selected", option_id="reject_once", feedback="keep the build"
        )

    h.host.answer = answer
    await h.session.prompt([PromptText(text="clean")])
    assert h.tools["Bash"].ran == []  # type: ignore[attr-defined]
    (request,) = h.host.permission_requests
    assert request.tool_call.tool_call_id == "b1"
    assert request.reason
    h.server.assert_done()


async def test_allow_always_is_remembered_for_the_session(harness: HarnessFactory) -> None:
    h = await harness(
        scenario(
            reply(tool_use("Bash", {"command": "make"}, id="a1")),
            reply(tool_use("Bash", {"command": "make"}, id="a2")),
            reply(tool_use("Bash", {"command": "make install"}, id="a3")),
            reply("built"),
        )
    )

    async def answer(request: PermissionRequest) -> PermissionResponse:
        if request.tool_call.tool_call_id == "a1":
            return PermissionResponse(outcome="selected", option_id="allow_always")
        return PermissionResponse(outcome="selected", option_id="reject_once")

    h.host.answer = answer
    await h.session.prompt([PromptText(text="build")])
    assert [r.tool_call.tool_call_id for r in h.host.permission_requests] == ["a1", "a3"]
    assert h.tools["Bash"].ran == ["make", "make"]  # type: ignore[attr-defined]


async def test_an_unattended_ask_becomes_the_doors_denial(harness: HarnessFactory) -> None:
    from lsp_agent.headless.host import refuse_unattended

    wording = ") and this is a non-interactive run. Allow it with --allowedTools 'Bash(make)'."
    h = await harness(
        scenario(
            reply(tool_use("Bash", {"command": "make"}, id="h1")),
            reply(
                "denied",
                expect=expecting(tool_results=[ToolResultExpect(is_error=True, contains=wording)]),
            ),
        ),
        unattended=refuse_unattended,
    )
    await h.session.prompt([PromptText(text="build")])
    assert h.host.permission_requests == []
    assert h.tools["Bash"].ran == []  # type: ignore[attr-defined]
    (final,) = [u for u in h.host.updates if isinstance(u, ToolCallUpdate) and u.status == "failed"]
    assert final.raw_output is not None
    assert final.raw_output["refusal"]["kind"] == "denied"
    assert "non-interactive run" in final.raw_output["refusal"]["reason"]
    (result,) = h.session.history[2].content
    assert isinstance(result, ToolResultBlock)
    assert result.content.startswith("Permission denied: Bash needs approval (")
    h.server.assert_done()


async def test_a_rejection_is_a_typed_refusal_with_the_users_words(
    harness: HarnessFactory,
) -> None:
    h = await harness(
        scenario(
            reply(tool_use("Bash", {"command": "make"}, id="r1")),
            reply(
                "ok",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(
                            is_error=True,
                            contains="The user rejected this tool call; it did not run. "
                            "The user said: not now",
                        )
                    ]
                ),
            ),
        ),
    )

    async def reject(_request: PermissionRequest) -> PermissionResponse:
        return PermissionResponse(outcome="selected", option_id="reject_once", feedback="not now")

    h.host.answer = reject
    await h.session.prompt([PromptText(text="build")])
    (final,) = [u for u in h.host.updates if isinstance(u, ToolCallUpdate) and u.status == "failed"]
    assert final.raw_output == {
        "refusal": {"kind": "rejected", "reason": "not now", "source": "default"}
    }
    h.server.assert_done()


async def test_failing_bash_skips_later_calls_of_the_same_message(
    harness: HarnessFactory,
) -> None:
    h = await harness(
        scenario(
            reply(
                tool_use("Bash", {"command": "fail tests"}, id="f1"),
                tool_use("Bash", {"command": "deploy"}, id="f2"),
            ),
            reply(
                "stopped",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=True, contains="ran fail tests"),
                        ToolResultExpect(is_error=True, contains="earlier Bash command"),
                    ]
                ),
            ),
        ),
        permission_mode="bypassPermissions",
    )
    await h.session.prompt([PromptText(text="ship")])
    assert h.tools["Bash"].ran == ["fail tests"]  # type: ignore[attr-defined]
    progress = [
        u
        for u in h.host.updates
        if isinstance(u, ToolCallUpdate) and u.tool_call_id == "f1" and u.content
    ]
    assert any("running fail tests" in str(u.content) for u in progress)
    h.server.assert_done()


async def test_plan_mode_denies_non_read_only_tools(harness: HarnessFactory) -> None:
    h = await harness(
        scenario(
            reply(
                tool_use("Bash", {"command": "make"}, id="p1"),
                tool_use("Echo", {"text": "r"}, id="p2"),
            ),
            reply(
                "planned",
                expect=expecting(
                    tool_results=[
                        ToolResultExpect(is_error=True, contains="plan mode"),
                        ToolResultExpect(is_error=False, contains="echo: r"),
                    ]
                ),
            ),
        ),
        permission_mode="plan",
    )
    await h.session.prompt([PromptText(text="plan")])
    assert h.tools["Bash"].ran == []  # type: ignore[attr-defined]
    tool_calls = [u for u in h.host.updates if isinstance(u, ToolCall)]
    assert {t.tool_call_id for t in tool_calls} == {"p1", "p2"}
    h.server.assert_done()


async def test_prompt_while_busy_is_refused(harness: HarnessFactory) -> None:
    from lsp_agent.sessions.manager import SessionError

    h = await harness(scenario(reply(tool_use("Hang", {}, id="x1")), reply("after")))
    task = asyncio.create_task(h.session.prompt([PromptText(text="one")]))
    await asyncio.wait_for(h.tools["Hang"].started.wait(), 10)  # type: ignore[attr-defined]
    try:
        await h.session.prompt([PromptText(text="two")])
    except SessionError as exc:
        assert "already running" in str(exc)
    else:
        raise AssertionError("a second prompt must be refused while one runs")
    h.session.cancel()
    assert (await task).stop_reason == "cancelled"


async def test_full_context_window_ends_the_turn_without_retrying(harness: HarnessFactory) -> None:
    h = await harness(scenario(reply("partial", stop_reason="model_context_window_exceeded")))
    result = await h.session.prompt([PromptText(text="go")])
    assert result.stop_reason == "max_tokens"
    assert result.terminal == "context_window"
    assert result.error is not None and "context window" in result.error
    h.server.assert_done()


async def test_a_crash_before_the_tool_runs_is_a_tool_error_with_its_reason_shown(
    harness: HarnessFactory,
) -> None:
    from lsp_agent.protocol.events import ContentItem

    h = await harness(
        scenario(
            reply(tool_use("Crashprep", {"text": "x"}, id="n1")),
            reply(
                "handled",
                expect=expecting(
                    tool_results=[ToolResultExpect(is_error=True, contains="prepare exploded")]
                ),
            ),
        ),
    )
    result = await h.session.prompt([PromptText(text="go")])
    assert result.final_text == "handled"
    failed = [
        u
        for u in h.host.updates
        if isinstance(u, ToolCallUpdate) and u.tool_call_id == "n1" and u.status == "failed"
    ]
    assert failed and isinstance(failed[-1].content[0], ContentItem)  # type: ignore[index]
    assert "prepare exploded" in failed[-1].content[0].content.text  # type: ignore[index, union-attr]
    h.server.assert_done()


async def test_a_lone_surrogate_from_the_model_does_not_break_the_session(
    harness: HarnessFactory,
) -> None:
    h = await harness(
        scenario(
            reply("bad \ud800 text"),
            reply("still fine", expect=expecting(last_user_contains="again")),
        )
    )
    first = await h.session.prompt([PromptText(text="hi")])
    assert first.stop_reason == "end_turn"
    second = await h.session.prompt([PromptText(text="again")])
    assert second.final_text == "still fine"
    h.server.assert_done()


async def test_cancel_keeps_usage_and_marks_interrupted_calls_failed(
    harness: HarnessFactory,
) -> None:
    from lsp_agent.testing.scenario import ScriptedUsage

    h = await harness(
        scenario(
            reply(
                tool_use("Hang", {}, id="k1"),
                usage=ScriptedUsage(input_tokens=100, output_tokens=7),
            ),
        )
    )
    task = asyncio.create_task(h.session.prompt([PromptText(text="start")]))
    await asyncio.wait_for(h.tools["Hang"].started.wait(), 10)  # type: ignore[attr-defined]
    h.session.cancel()
    result = await asyncio.wait_for(task, 10)
    assert result.stop_reason == "cancelled"
    assert result.requests == 1
    assert result.usage.input_tokens == 100 and result.usage.output_tokens == 7
    assert h.session.usage.input_tokens == 100  # counted once, not doubled
    last = [u for u in h.host.updates if isinstance(u, ToolCallUpdate) and u.tool_call_id == "k1"]
    assert last[-1].status == "failed"
    assert "Interrupted" in str(last[-1].content)
    h.server.assert_done()


async def test_the_loops_and_the_tools_updates_reach_the_host_in_one_ordered_stream(
    harness: HarnessFactory,
) -> None:
    """The loop, the executor and the tool all send through the session's one channel: the
    host sees the announcement, the call's progress and result, then the next answer, in the
    order they happened."""
    h = await harness(
        scenario(
            reply("Running.", tool_use("Bash", {"command": "make"}, id="b1")),
            reply("Built."),
        ),
        permission_mode="bypassPermissions",
    )
    result = await h.session.prompt([PromptText(text="build")])
    assert (result.stop_reason, result.terminal, result.requests) == ("end_turn", "completed", 2)
    seen: list[str] = []
    for u in h.host.updates:
        if isinstance(u, AgentMessageChunk):
            seen.append(f"text {u.content.text}")
        elif isinstance(u, ToolCall):
            seen.append(f"call {u.tool_call_id}")
        elif isinstance(u, ToolCallUpdate) and u.status is not None:
            seen.append(f"{u.status} {u.tool_call_id}")
        elif isinstance(u, ToolCallUpdate) and u.content and "running make" in str(u.content):
            seen.append(f"progress {u.tool_call_id}")
        elif isinstance(u, UsageUpdate):
            seen.append("usage")
    assert seen == [
        "text Running.",
        "call b1",
        "usage",
        "in_progress b1",
        "progress b1",
        "completed b1",
        "text Built.",
        "usage",
    ]


async def test_a_prompt_is_bounded_by_default(harness: HarnessFactory) -> None:
    # No door setting: the core's default cap still ends a model that never stops calling
    # tools (before, max_turns defaulted to no bound in the editor door).
    steps = [
        reply(tool_use("Echo", {"text": str(n)}, id=f"e{n}"))
        for n in range(DEFAULT_MAX_MODEL_REQUESTS)
    ]
    h = await harness(scenario(*steps))
    result = await h.session.prompt([PromptText(text="go on forever")])
    assert result.stop_reason == "max_turn_requests"
    assert_consistent(h.session.history)
    h.server.assert_done()
