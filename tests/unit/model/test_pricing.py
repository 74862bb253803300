"""The price table: every model of the model table has a price, and costs add up."""

from __future__ import annotations

import pytest

from lsp_agent.model.limits import DEFAULT_MODEL, MODELS
from lsp_agent.model.pricing import PRICES, cost_usd, price_for
from lsp_agent.model.types import Usage


def test_every_table_model_has_a_price() -> None:
    assert {entry.name for entry in MODELS} == set(PRICES)


def test_provider_ids_and_aliases_find_their_price() -> None:
    sonnet = PRICES["claude-sonnet-4-5"]
    assert price_for("us.anthropic.claude-sonnet-4-5-20250929-v1:0") == sonnet
    assert price_for("claude-sonnet-4-5@20250929") == sonnet
    assert price_for("haiku") == PRICES["claude-haiku-4-5"]


def test_unknown_models_cost_what_the_default_costs() -> None:
    assert price_for("some-gateway-model") == PRICES[DEFAULT_MODEL]


def test_cost_counts_every_kind_of_token() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_creation_input_tokens=1_000_000,
        cache_read_input_tokens=1_000_000,
    )
    # Opus 4.1: $15 in, $75 out, $18.75 cache writes, $1.50 cache reads per million.
    assert cost_usd("claude-opus-4-1", usage) == pytest.approx(15 + 75 + 18.75 + 1.5)
    assert cost_usd("lsp-agent-offline-trial", usage) == 0
