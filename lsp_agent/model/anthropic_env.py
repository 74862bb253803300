"""The settings of the Anthropic client read from the environment: the model's name and the
read and connect timeouts (Claude Code's variable names where it has one). Kept apart from
:mod:`lsp_agent.model.anthropic` so callers that only need a name or a timeout read one small
module."""

from __future__ import annotations

import os
from collections.abc import Mapping

from lsp_agent.model.limits import DEFAULT_MODEL
from lsp_agent.model.providers import provider_from_env

READ_TIMEOUT_ENV = "API_TIMEOUT_MS"
"""Milliseconds allowed for each read from the endpoint (Claude Code's variable; default
600,000). A stalled stream fails after this long per attempt."""

CONNECT_TIMEOUT_ENV = "LSP_AGENT_CONNECT_TIMEOUT_MS"
"""Milliseconds allowed to connect to the endpoint (default 10,000)."""


def timeouts_from_env(environ: Mapping[str, str]) -> tuple[float, float]:
    """``(read_s, connect_s)`` from :data:`READ_TIMEOUT_ENV` and :data:`CONNECT_TIMEOUT_ENV`
    (milliseconds; defaults 600 s and 10 s). Raises ``ValueError`` naming the variable when a
    value is not a positive number."""
    out: list[float] = []
    for name, default_ms in ((READ_TIMEOUT_ENV, 600_000.0), (CONNECT_TIMEOUT_ENV, 10_000.0)):
        raw = environ.get(name, "").strip()
        try:
            value = float(raw) if raw else default_ms
        except ValueError:
            value = -1.0
        if not value > 0 or value == float("inf"):
            raise ValueError(f"{name}={raw!r}: expected a positive number of milliseconds")
        out.append(value / 1000)
    return out[0], out[1]


def resolve_model_name(explicit: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The model to use: ``explicit`` when non-empty, else ``ANTHROPIC_MODEL`` from
    ``environ`` (default ``os.environ``) when non-empty, else the model table's
    :data:`~lsp_agent.model.limits.DEFAULT_MODEL` (on Bedrock and Vertex the ``opus`` alias
    instead, which becomes the newest Opus the provider has, or
    ``ANTHROPIC_DEFAULT_OPUS_MODEL``)."""
    if explicit:
        return explicit
    env = os.environ if environ is None else environ
    if env.get("ANTHROPIC_MODEL"):
        return env["ANTHROPIC_MODEL"]
    return DEFAULT_MODEL if provider_from_env(env).provider == "anthropic" else "opus"
