"""The model table: context window and output limits per model name.

Figures are the Anthropic models overview's (context window and maximum output, in tokens).
A name is matched exactly, then by its longest known prefix (``claude-sonnet-4-5-20250929``
matches ``claude-sonnet-4-5``); unknown models get :data:`DEFAULT_LIMITS`, the window every
current Claude model has. A ``[1m]`` suffix (Claude Code's way to ask for the 1M-token
window) selects a 1,000,000-token window.

``scripted-20k`` is a test entry: a 20,000-token window so long-session tests and benchmarks
overflow after a few dozen turns instead of thousands.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class ModelLimits:
    """``context_window``: tokens the prompt plus the output may hold; ``max_output_tokens``:
    the largest ``max_tokens`` the model accepts."""

    context_window: int
    max_output_tokens: int


DEFAULT_LIMITS = ModelLimits(context_window=200_000, max_output_tokens=32_000)
"""Limits of a model the table does not know."""

ONE_MILLION = 1_000_000

MODEL_LIMITS: dict[str, ModelLimits] = {
    "claude-opus-4-8": ModelLimits(context_window=200_000, max_output_tokens=64_000),
    "claude-opus-4-7": ModelLimits(context_window=200_000, max_output_tokens=64_000),
    "claude-opus-4-6": ModelLimits(context_window=200_000, max_output_tokens=64_000),
    "claude-opus-4-5": ModelLimits(context_window=200_000, max_output_tokens=64_000),
    "claude-opus-4-1": ModelLimits(context_window=200_000, max_output_tokens=32_000),
    "claude-opus-4": ModelLimits(context_window=200_000, max_output_tokens=32_000),
    "claude-sonnet-4-6": ModelLimits(context_window=200_000, max_output_tokens=64_000),
    "claude-sonnet-4-5": ModelLimits(context_window=200_000, max_output_tokens=64_000),
    "claude-sonnet-4": ModelLimits(context_window=200_000, max_output_tokens=64_000),
    "claude-haiku-4-5": ModelLimits(context_window=200_000, max_output_tokens=64_000),
    "claude-3-7-sonnet": ModelLimits(context_window=200_000, max_output_tokens=64_000),
    "claude-3-5-haiku": ModelLimits(context_window=200_000, max_output_tokens=8_192),
    "scripted-20k": ModelLimits(context_window=20_000, max_output_tokens=4_096),
}


def limits_for(model: str) -> ModelLimits:
    """The limits of ``model`` (see the module doc for the matching rules)."""
    name = model.strip()
    wide = name.lower().endswith("[1m]")
    if wide:
        name = name[: -len("[1m]")]
    found = MODEL_LIMITS.get(name)
    if found is None:
        prefixes = [k for k in MODEL_LIMITS if name.startswith(k)]
        found = MODEL_LIMITS[max(prefixes, key=len)] if prefixes else DEFAULT_LIMITS
    if wide:
        return ModelLimits(context_window=ONE_MILLION, max_output_tokens=found.max_output_tokens)
    return found
