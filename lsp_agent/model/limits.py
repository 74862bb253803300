"""The model table: per model, its context window, output limits, thinking support, family
(for the ``opus``/``sonnet``/``haiku`` aliases) and its ids on Amazon Bedrock and Vertex AI.

Figures and ids are the Anthropic models overview's and the Bedrock and Vertex AI pages' of
the Claude docs (context window and maximum output in tokens). A model without a documented
Bedrock or Vertex id has ``None`` there: on that provider its alias resolves to the newest
model of the family that has one, and ``ANTHROPIC_DEFAULT_*_MODEL`` pins any id (Claude
Code's variables).

A name is looked up after :func:`canonical_name` removed what providers add (a Bedrock
inference-profile prefix ``us.``/``eu.``/``apac.``/``global.``, ``anthropic.``, a ``-v1:0``
version, a Vertex ``@20250929`` date): exactly, then by its longest known prefix
(``claude-sonnet-4-5-20250929`` matches ``claude-sonnet-4-5``); an alias gives its default
model's limits; unknown models get :data:`DEFAULT_LIMITS`, the window every current Claude
model has. A ``[1m]`` suffix (Claude Code's way to ask for the 1M-token window) selects a
1,000,000-token window.

``scripted-20k`` is a test entry: a 20,000-token window so long-session tests and benchmarks
overflow after a few dozen turns instead of thousands.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Literal

Family = Literal["opus", "sonnet", "haiku"]
ALIASES: tuple[Family, ...] = ("opus", "sonnet", "haiku")
"""Claude Code's model aliases; each names the newest model of its family."""

DEFAULT_MODEL = "claude-opus-4-8"
"""The model used when neither the request, the settings nor ``ANTHROPIC_MODEL`` names one
(an entry of the table; on Bedrock and Vertex AI the ``opus`` alias is used instead)."""

ESCALATED_OUTPUT_CAP = 64_000
"""The largest output a request asks for after a ``max_tokens`` stop (tokens), whatever the
model allows beyond it: longer outputs take minutes and rarely help a coding turn."""


@dataclass(frozen=True, kw_only=True)
class ModelLimits:
    """``context_window``: tokens the prompt plus the output may hold; ``max_output_tokens``:
    the largest ``max_tokens`` the model accepts; ``escalated_max_output_tokens``: what a
    request asks for when it is retried after a ``max_tokens`` stop (``None``: the smaller of
    ``max_output_tokens`` and :data:`ESCALATED_OUTPUT_CAP`); ``thinking``: whether the model
    takes extended thinking (``thinking`` request parameter)."""

    context_window: int
    max_output_tokens: int
    escalated_max_output_tokens: int | None = None
    thinking: bool = True

    @property
    def escalated_output(self) -> int:
        """The output cap after a ``max_tokens`` stop (tokens; see the class doc)."""
        if self.escalated_max_output_tokens is not None:
            return self.escalated_max_output_tokens
        return min(self.max_output_tokens, ESCALATED_OUTPUT_CAP)


@dataclass(frozen=True, kw_only=True)
class ModelEntry:
    """One row of the table. ``name`` is the Claude API alias (what the Messages API is sent);
    ``bedrock_id`` the base Bedrock model id, before any inference-profile prefix;
    ``vertex_id`` the Vertex AI model name; ``None`` where the provider has no documented id."""

    name: str
    family: Family | None
    limits: ModelLimits
    bedrock_id: str | None = None
    vertex_id: str | None = None


def _entry(
    name: str,
    family: Family | None,
    window: int,
    output: int,
    *,
    bedrock: str | None = None,
    vertex: str | None = None,
    thinking: bool = True,
) -> ModelEntry:
    limits = ModelLimits(context_window=window, max_output_tokens=output, thinking=thinking)
    return ModelEntry(name=name, family=family, limits=limits, bedrock_id=bedrock, vertex_id=vertex)


MODELS: tuple[ModelEntry, ...] = (
    # Newest first within each family: an alias takes the first of its family that the
    # provider has.
    _entry("claude-opus-4-8", "opus", 200_000, 64_000, vertex="claude-opus-4-8"),
    _entry("claude-opus-4-7", "opus", 200_000, 64_000, vertex="claude-opus-4-7"),
    _entry(
        "claude-opus-4-6",
        "opus",
        200_000,
        64_000,
        bedrock="anthropic.claude-opus-4-6-v1",
        vertex="claude-opus-4-6",
    ),
    _entry(
        "claude-opus-4-5",
        "opus",
        200_000,
        64_000,
        bedrock="anthropic.claude-opus-4-5-20251101-v1:0",
        vertex="claude-opus-4-5@20251101",
    ),
    _entry(
        "claude-opus-4-1",
        "opus",
        200_000,
        32_000,
        bedrock="anthropic.claude-opus-4-1-20250805-v1:0",
        vertex="claude-opus-4-1@20250805",
    ),
    _entry(
        "claude-opus-4",
        "opus",
        200_000,
        32_000,
        bedrock="anthropic.claude-opus-4-20250514-v1:0",
        vertex="claude-opus-4@20250514",
    ),
    _entry(
        "claude-sonnet-4-6",
        "sonnet",
        200_000,
        64_000,
        bedrock="anthropic.claude-sonnet-4-6",
        vertex="claude-sonnet-4-6",
    ),
    _entry(
        "claude-sonnet-4-5",
        "sonnet",
        200_000,
        64_000,
        bedrock="anthropic.claude-sonnet-4-5-20250929-v1:0",
        vertex="claude-sonnet-4-5@20250929",
    ),
    _entry(
        "claude-sonnet-4",
        "sonnet",
        200_000,
        64_000,
        bedrock="anthropic.claude-sonnet-4-20250514-v1:0",
        vertex="claude-sonnet-4@20250514",
    ),
    _entry(
        "claude-3-7-sonnet",
        "sonnet",
        200_000,
        64_000,
        bedrock="anthropic.claude-3-7-sonnet-20250219-v1:0",
        vertex="claude-3-7-sonnet@20250219",
    ),
    _entry(
        "claude-haiku-4-5",
        "haiku",
        200_000,
        64_000,
        bedrock="anthropic.claude-haiku-4-5-20251001-v1:0",
        vertex="claude-haiku-4-5@20251001",
    ),
    _entry(
        "claude-3-5-haiku",
        "haiku",
        200_000,
        8_192,
        bedrock="anthropic.claude-3-5-haiku-20241022-v1:0",
        vertex="claude-3-5-haiku@20241022",
        thinking=False,
    ),
    _entry("scripted-20k", None, 20_000, 4_096, thinking=False),
)

DEFAULT_LIMITS = ModelLimits(
    context_window=200_000,
    max_output_tokens=32_000,
    escalated_max_output_tokens=ESCALATED_OUTPUT_CAP,
)
"""Limits of a model the table does not know. Its real maximum output is unknown: requests
stay at 32,000 tokens, and the retry after a ``max_tokens`` stop tries the cap (an endpoint
whose model allows less answers with an error naming its limit)."""

ONE_MILLION = 1_000_000

MODEL_LIMITS: dict[str, ModelLimits] = {entry.name: entry.limits for entry in MODELS}
"""The limits by Claude API alias (the table's ``name`` column)."""

_BY_NAME: dict[str, ModelEntry] = {entry.name: entry for entry in MODELS}

# Bedrock inference-profile prefixes (cross-region and global routing), then the provider
# prefix and the version suffix of a Bedrock model id; a Vertex id's "@date".
_PROFILE_PREFIX = re.compile(r"^(?:global|us-gov|us|eu|apac|jp|au|ca)\.")
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")
_VERTEX_DATE = re.compile(r"@\d{8}$")


def canonical_name(model: str) -> str:
    """``model`` without what Bedrock and Vertex add around a Claude model name
    (``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` → ``claude-sonnet-4-5-20250929``,
    ``claude-sonnet-4-5@20250929`` → ``claude-sonnet-4-5``); other names unchanged."""
    name = model.strip()
    name = _PROFILE_PREFIX.sub("", name)
    name = name.removeprefix("anthropic.")
    name = _BEDROCK_VERSION.sub("", name)
    return _VERTEX_DATE.sub("", name)


def entry_for(model: str) -> ModelEntry | None:
    """The table row of ``model`` (an alias, an API name or a provider id), or ``None``."""
    name = canonical_name(model.removesuffix("[1m]").removesuffix("[1M]"))
    if name.lower() in ALIASES:
        return default_entry(name.lower(), "anthropic")  # type: ignore[arg-type]
    found = _BY_NAME.get(name)
    if found is not None:
        return found
    prefixes = [key for key in _BY_NAME if name.startswith(key)]
    return _BY_NAME[max(prefixes, key=len)] if prefixes else None


def default_entry(family: Family, provider: str) -> ModelEntry | None:
    """The newest model of ``family`` that ``provider`` (``anthropic``, ``bedrock``,
    ``vertex``) has an id for; ``None`` if none."""
    for entry in MODELS:
        if entry.family != family:
            continue
        if provider == "bedrock" and entry.bedrock_id is None:
            continue
        if provider == "vertex" and entry.vertex_id is None:
            continue
        return entry
    return None


def limits_for(model: str) -> ModelLimits:
    """The limits of ``model`` (see the module doc for the matching rules)."""
    wide = model.strip().lower().endswith("[1m]")
    entry = entry_for(model)
    found = entry.limits if entry is not None else DEFAULT_LIMITS
    if wide:
        return dataclasses.replace(found, context_window=ONE_MILLION)
    return found
