"""Prompt content blocks from the client."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from lsp_agent.lsp.prompt import prompt_parts


@pytest.mark.parametrize(
    "blocks", [[{"type": "text", "text": ""}], [{"type": "text", "text": "  \n"}]]
)
def test_a_prompt_without_text_is_refused_naming_the_problem(blocks: list[object]) -> None:
    with pytest.raises(JsonRpcInvalidParams, match="no text"):
        prompt_parts(blocks, method="lspAgent/session/prompt", buffer=lambda _p: None)


def test_an_empty_text_next_to_a_resource_is_fine() -> None:
    parts = prompt_parts(
        [
            {"type": "text", "text": ""},
            {"type": "resource", "resource": {"uri": "file:///tmp/a.py", "text": "x = 1\n"}},
        ],
        method="lspAgent/session/prompt",
        buffer=lambda _p: None,
    )
    assert len(parts) == 2
