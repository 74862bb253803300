"""Model timeouts from the environment (``API_TIMEOUT_MS``, ``LSP_AGENT_CONNECT_TIMEOUT_MS``)."""

from __future__ import annotations

import pytest

from lsp_agent.model.anthropic import AnthropicModel, timeouts_from_env


def test_defaults_and_values() -> None:
    assert timeouts_from_env({}) == (600.0, 10.0)
    assert timeouts_from_env({"API_TIMEOUT_MS": "1500", "LSP_AGENT_CONNECT_TIMEOUT_MS": "250"}) == (
        1.5,
        0.25,
    )


@pytest.mark.parametrize("value", ["abc", "0", "-5", "inf", "nan"])
def test_a_bad_value_names_the_variable(value: str) -> None:
    with pytest.raises(ValueError, match="API_TIMEOUT_MS"):
        timeouts_from_env({"API_TIMEOUT_MS": value})


def test_from_env_uses_them() -> None:
    model = AnthropicModel.from_env({"ANTHROPIC_API_KEY": "k", "API_TIMEOUT_MS": "2000"})
    assert model._timeout_s == 2.0
    assert model._connect_timeout_s == 2.0  # never longer than the read timeout
