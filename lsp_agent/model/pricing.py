"""What a model's tokens cost: the prices of the model table's models, and the cost of a usage.

Prices are Anthropic's list prices for the Claude API (the "Pricing" page of the Claude docs),
in US dollars per million tokens: base input, output, cache writes (the 5-minute cache: 1.25
times the input price) and cache reads (0.1 times the input price). Bedrock and Vertex AI list
the same prices for their global endpoints; their regional endpoints cost more and are not
modelled. ``claude-opus-4-7``
and ``claude-opus-4-8`` are priced as ``claude-opus-4-6`` (the docs list one price for the
Opus 4.5+ generation). Batch, long-context (>200k) and data-residency surcharges are not
modelled: the figures are an estimate, as Claude Code's ``total_cost_usd`` is.

``lsp-agent-offline-trial`` (the bundled scripted model of ``--offline``) costs nothing. A
model the table does not know is priced as :data:`~lsp_agent.model.limits.DEFAULT_MODEL`, so
a ``--max-budget-usd`` bound is never silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsp_agent.model.limits import DEFAULT_MODEL, entry_for
from lsp_agent.model.types import Usage

PER_MILLION = 1_000_000


@dataclass(frozen=True, kw_only=True)
class Price:
    """US dollars per million tokens of each kind."""

    input: float
    output: float
    cache_write: float
    cache_read: float


def _price(input_usd: float, output_usd: float) -> Price:
    return Price(
        input=input_usd,
        output=output_usd,
        cache_write=input_usd * 1.25,
        cache_read=input_usd * 0.1,
    )


_OPUS_NEW = _price(5.0, 25.0)
_OPUS_OLD = _price(15.0, 75.0)
_SONNET = _price(3.0, 15.0)

PRICES: dict[str, Price] = {
    "claude-opus-4-8": _OPUS_NEW,
    "claude-opus-4-7": _OPUS_NEW,
    "claude-opus-4-6": _OPUS_NEW,
    "claude-opus-4-5": _OPUS_NEW,
    "claude-opus-4-1": _OPUS_OLD,
    "claude-opus-4": _OPUS_OLD,
    "claude-sonnet-4-6": _SONNET,
    "claude-sonnet-4-5": _SONNET,
    "claude-sonnet-4": _SONNET,
    "claude-3-7-sonnet": _SONNET,
    "claude-haiku-4-5": _price(1.0, 5.0),
    "claude-3-5-haiku": _price(0.8, 4.0),
    "scripted-20k": _price(3.0, 15.0),
}
"""Prices by the model table's name (every row of :data:`~lsp_agent.model.limits.MODELS`)."""


FREE = Price(input=0.0, output=0.0, cache_write=0.0, cache_read=0.0)

_NOT_BILLED = frozenset({"lsp-agent-offline-trial"})


def price_for(model: str) -> Price:
    """The price of ``model`` (an alias, an API name or a provider id; see
    :func:`~lsp_agent.model.limits.entry_for`); unknown models cost what the default model
    costs."""
    if model in _NOT_BILLED:
        return FREE
    entry = entry_for(model)
    if entry is not None and entry.name in PRICES:
        return PRICES[entry.name]
    return PRICES[DEFAULT_MODEL]


def cost_usd(model: str, usage: Usage) -> float:
    """What ``usage`` (one response's or a sum of them) of ``model`` costs, in US dollars."""
    price = price_for(model)
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    ) / PER_MILLION
