"""``run -p --output-format stream-json --include-partial-messages`` streams the server-sent
events of the turn's own model requests, and only those: the session title asked for in the
background while the turn runs is not part of the conversation, so its events never reach
stdout (a reader would see a second ``message_start`` inside the turn's answer)."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.model.background import BACKGROUND_ENV
from lsp_agent.testing.scenario import reply, scenario
from tests.e2e_cli.conftest import run_cli


def test_the_background_title_request_s_events_are_not_streamed(
    project: Path, tmp_path: Path
) -> None:
    run = run_cli(
        ["-p", "--output-format", "stream-json", "--include-partial-messages", "explain calc"],
        # The title is answered first, while the turn's own answer is still on its way.
        scenario=scenario(
            reply("It adds.", delay_ms=1500),
            background={"title": [reply("Explain calc")]},
        ),
        cwd=project,
        extra_env={BACKGROUND_ENV: "1", "LSP_AGENT_DATA_DIR": str(tmp_path / "data")},
    )
    assert run.code == 0, run.proc.stderr
    assert run.server.server.background_unconsumed("title") == 0  # the title was asked for
    partial = [e["event"] for e in run.events() if e["type"] == "stream_event"]
    kinds = [event["type"] for event in partial]
    assert kinds.count("message_start") == 1, kinds
    texts = [event["delta"]["text"] for event in partial if event["type"] == "content_block_delta"]
    assert "".join(texts) == "It adds."
