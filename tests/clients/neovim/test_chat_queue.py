"""``:AgentChat PROMPT`` while a turn runs: the prompt is queued and sent when the turn ends
(two queued prompts go as one), and kept unsent in the prompt window when the turn is
cancelled. Spec: editor-clients/neovim/tests/integration/chat_queue_spec.lua."""

from __future__ import annotations

from lsp_agent.testing.scenario import expecting, reply, scenario, tool_use

from .conftest import RunIntegration


def test_a_prompt_given_during_a_turn_is_queued(run_integration: RunIntegration) -> None:
    run_integration(
        "chat_queue",
        scenario(
            reply(
                tool_use("Bash", {"command": "touch made.txt"}, id="toolu_touch"),
                expect=expecting(last_user_contains="first prompt"),
            ),
            reply("Done with the first."),
            # The queued prompts, sent together once the first turn ended.
            reply("Got both.", expect=expecting(last_user_contains="queued one\n\nqueued two")),
            reply(
                "Thinking about it for a very long while, word after word after word.",
                expect=expecting(last_user_contains="slow prompt"),
                chunk_chars=10,
                stall_after_events=5,
            ),
        ),
        files={"notes.py": "x = 1\n"},
    )
