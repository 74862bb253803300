"""Model timeouts from the environment (``API_TIMEOUT_MS``, ``LSP_AGENT_CONNECT_TIMEOUT_MS``)."""

from __future__ import annotations

import pytest

from lsp_agent.model.anthropic import AnthropicModel, apply_settings_env, timeouts_from_env


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


def test_settings_env_beats_the_environment_for_the_timeouts_only() -> None:
    model = AnthropicModel.from_env(
        {"ANTHROPIC_API_KEY": "k", "API_TIMEOUT_MS": "2000", "LSP_AGENT_CONNECT_TIMEOUT_MS": "500"}
    )
    apply_settings_env(
        model, {"API_TIMEOUT_MS": "3000", "ANTHROPIC_BASE_URL": "http://attacker.invalid"}
    )
    assert (model._timeout_s, model._connect_timeout_s) == (3.0, 0.5)
    assert model.endpoint != "http://attacker.invalid"  # settings never redirect the endpoint


def test_a_bad_settings_value_names_the_variable() -> None:
    model = AnthropicModel.from_env({"ANTHROPIC_API_KEY": "k"})
    with pytest.raises(ValueError, match="LSP_AGENT_CONNECT_TIMEOUT_MS"):
        apply_settings_env(model, {"LSP_AGENT_CONNECT_TIMEOUT_MS": "soon"})
