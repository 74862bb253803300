"""What a headless run spent: Claude Code's ``total_cost_usd`` and ``modelUsage`` result fields,
and the ``--max-budget-usd`` bound.

Costs are estimates from list prices (:mod:`lsp_agent.model.pricing`), summed per response
with the model that answered it (a ``--fallback-model`` switch is priced as the fallback).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lsp_agent.model.limits import limits_for
from lsp_agent.model.pricing import cost_usd
from lsp_agent.model.types import AssistantResponse, Usage

BUDGET_SUBTYPE = "error_max_budget_usd"
"""Claude Code's result subtype when ``--max-budget-usd`` stopped the run."""


def total_cost_usd(responses: Sequence[AssistantResponse], *, model: str) -> float:
    """The cost of ``responses`` in US dollars; a response without a model name is priced as
    ``model`` (the run's)."""
    return sum(cost_usd(r.model or model, r.usage) for r in responses)


def model_usage(responses: Sequence[AssistantResponse], *, model: str) -> dict[str, Any]:
    """Claude Code's ``modelUsage``: per model name, its tokens (``inputTokens``,
    ``outputTokens``, ``cacheReadInputTokens``, ``cacheCreationInputTokens``),
    ``webSearchRequests`` (always 0: no web search tool), ``costUSD`` and ``contextWindow``
    (tokens, from the model table)."""
    sums: dict[str, Usage] = {}
    for response in responses:
        name = response.model or model
        sums[name] = sums.get(name, Usage()) + response.usage
    return {
        name: {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "cacheReadInputTokens": usage.cache_read_input_tokens,
            "cacheCreationInputTokens": usage.cache_creation_input_tokens,
            "webSearchRequests": 0,
            "costUSD": cost_usd(name, usage),
            "contextWindow": limits_for(name).context_window,
        }
        for name, usage in sums.items()
    }


@dataclass(kw_only=True)
class Budget:
    """``--max-budget-usd``: :meth:`spent` is the core's ``AgentConfig.budget_spent`` (asked
    before every model request); ``exceeded`` records that it stopped the run."""

    limit_usd: float
    model: str
    responses: list[AssistantResponse] = field(default_factory=list)
    exceeded: bool = False

    def spent(self) -> str | None:
        """A message once the run's responses cost more than ``limit_usd``, else ``None``."""
        cost = total_cost_usd(self.responses, model=self.model)
        if cost <= self.limit_usd:
            return None
        self.exceeded = True
        return f"reached the maximum budget (${self.limit_usd:g}; spent ${cost:.4f})"
