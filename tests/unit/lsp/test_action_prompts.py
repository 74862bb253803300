"""Prompts of the agent code actions."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.lsp.action_prompts import Problem, ask_prompt, excerpt, explain_prompt, fix_prompt
from lsp_agent.protocol.prompt import PromptResource, PromptText

TEXT = "".join(f"line {i}\n" for i in range(1, 21)) + "unsaved edit\n"


def test_excerpt_numbers_lines_and_marks_the_problem() -> None:
    out = excerpt(TEXT, 9, 9, context=1).splitlines()
    assert out == ["      9\tline 9", ">    10\tline 10", "     11\tline 11"]


def test_fix_prompt_names_the_problem_and_attaches_the_buffer() -> None:
    problem = Problem(line=9, character=2, end_line=9, message="bad", source="Ruff", code="F1")
    text_part, resource = fix_prompt(
        path=Path("/w/a.py"), text=TEXT, problems=[problem], cwd=Path("/w")
    )
    assert isinstance(text_part, PromptText) and isinstance(resource, PromptResource)
    assert "error at a.py:10:3 [Ruff F1]: bad" in text_part.text
    assert ">    10\tline 10" in text_part.text
    assert resource.text == TEXT  # the buffer, unsaved text included


def test_explain_prompt_asks_for_no_changes() -> None:
    problem = Problem(line=0, character=0, end_line=0, message="m")
    (text_part, _res) = explain_prompt(
        path=Path("/w/a.py"), text=TEXT, problems=[problem], cwd=Path("/w")
    )
    assert isinstance(text_part, PromptText) and "do not change any file" in text_part.text


def test_ask_prompt_carries_the_selection_with_its_lines() -> None:
    text_part, resource = ask_prompt(
        path=Path("/w/a.py"), text=TEXT, start_line=2, end_line=3, question="Why?", cwd=Path("/w")
    )
    assert isinstance(text_part, PromptText) and text_part.text.startswith("Why?")
    assert isinstance(resource, PromptResource)
    assert (resource.start_line, resource.end_line, resource.text) == (3, 4, "line 3\nline 4")
