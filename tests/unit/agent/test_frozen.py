"""evolve: the same value as ``dataclasses.replace`` for the classes the loop copies with it,
and those classes stay fit for it (all fields set by ``__init__``, no ``__post_init__``, no
slots)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.agent.frozen import evolve
from lsp_agent.agent.loop import LoopState
from lsp_agent.model.types import Message, Usage
from lsp_agent.tools.base import ToolContext


@pytest.mark.parametrize("cls", [LoopState, ToolContext])
def test_the_copied_classes_fit(cls: type[Any]) -> None:
    assert dataclasses.is_dataclass(cls)
    assert not hasattr(cls, "__post_init__")
    assert not hasattr(cls, "__slots__")
    assert all(f.init for f in dataclasses.fields(cls))


def test_evolve_is_replace() -> None:
    state = LoopState(
        messages=(Message.user_text("a"),),
        before=(),
        requests=3,
        max_tokens=100,
        usage=Usage(input_tokens=5),
        nudges=1,
        stop_continues=2,
        recovered=True,
    )
    changes: list[dict[str, Any]] = [
        {"messages": (*state.messages, Message.user_text("b"))},
        {"requests": 4, "usage": state.usage + Usage(output_tokens=7)},
        {},
    ]
    for change in changes:
        new = evolve(state, **change)
        assert new == dataclasses.replace(state, **change)
        assert new is not state
        assert type(new) is LoopState
    assert state.requests == 3  # the original is untouched
    with pytest.raises(dataclasses.FrozenInstanceError):
        evolve(state, requests=1).requests = 2  # type: ignore[misc]


def test_evolve_refuses_an_unknown_field(tmp_path: Path) -> None:
    state = LoopState(messages=(), max_tokens=1)
    with pytest.raises(AssertionError):
        evolve(state, message=())
