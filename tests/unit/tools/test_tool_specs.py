"""Tool specs are built once per name, description and input model, and shared by every tool
set (session) that offers the same tool."""

from __future__ import annotations

from typing import Any

from lsp_agent.tools.base import Prepared, Tool, ToolContext, ToolInput, ToolOutput
from lsp_agent.tools.registry import default_tools


class EchoInput(ToolInput):
    text: str


class OtherInput(EchoInput):
    count: int = 1


class Echo(Tool[EchoInput, Any]):
    name = "Echo"
    description = "Echo the text."
    input_model = EchoInput

    async def call(self, inp: EchoInput, prepared: Prepared[Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(text=inp.text)


class LoudEcho(Echo):
    description = "Echo the text, loudly."


class CountedEcho(Echo):
    input_model = OtherInput


def test_two_tool_sets_share_the_specs_of_the_same_tools() -> None:
    first, second = default_tools(), default_tools()
    assert first.specs() == second.specs()
    assert all(a is b for a, b in zip(first.specs(), second.specs(), strict=True))
    assert [s.name for s in first.specs()] == ["Read", "Edit", "Write", "Glob", "Grep", "Bash"]
    assert all("title" not in s.input_schema for s in first.specs())


def test_a_tool_with_another_description_or_input_model_has_its_own_spec() -> None:
    echo, loud, counted = Echo().spec(), LoudEcho().spec(), CountedEcho().spec()
    assert Echo().spec() is echo
    assert loud.name == echo.name == counted.name == "Echo"
    assert loud.description == "Echo the text, loudly." and echo.description == "Echo the text."
    assert set(echo.input_schema["properties"]) == {"text"}
    assert set(loud.input_schema["properties"]) == {"text"}
    assert set(counted.input_schema["properties"]) == {"text", "count"}
