"""Where model requests go: the Claude API, Amazon Bedrock or Google Vertex AI, chosen from the
environment the way Claude Code chooses (its variables, unchanged), and which model id each
one is sent.

- ``CLAUDE_CODE_USE_BEDROCK=1``: Amazon Bedrock through the SDK's ``AnthropicBedrock``
  (``anthropic[bedrock]``, our ``bedrock`` extra). Region: ``AWS_REGION``, else
  ``AWS_DEFAULT_REGION`` or the AWS profile's. Credentials: the AWS chain (``AWS_ACCESS_KEY_ID``
  …, ``AWS_PROFILE``) or ``AWS_BEARER_TOKEN_BEDROCK``. Endpoint override:
  ``ANTHROPIC_BEDROCK_BASE_URL``. ``CLAUDE_CODE_SKIP_BEDROCK_AUTH=1``: requests are sent
  unsigned (an LLM gateway in front of Bedrock adds its own credentials).
- ``CLAUDE_CODE_USE_VERTEX=1``: Vertex AI through ``AnthropicVertex`` (``anthropic[vertex]``,
  our ``vertex`` extra). ``CLOUD_ML_REGION`` (e.g. ``global``, ``us-east5``),
  ``ANTHROPIC_VERTEX_PROJECT_ID``; credentials: Google Application Default Credentials
  (``GOOGLE_APPLICATION_CREDENTIALS`` …). Endpoint override: ``ANTHROPIC_VERTEX_BASE_URL``.
  ``VERTEX_REGION_CLAUDE_<MODEL>`` (:data:`VERTEX_REGION_VARIABLES`, Claude Code's names)
  sends one model's requests to another region than ``CLOUD_ML_REGION``.
  ``CLAUDE_CODE_SKIP_VERTEX_AUTH=1``: no Google credentials are looked up and requests carry
  no ``Authorization`` header (a gateway adds its own).
- otherwise the Claude API (``ANTHROPIC_API_KEY``/``ANTHROPIC_AUTH_TOKEN``,
  ``ANTHROPIC_BASE_URL``).

Model names: the aliases ``opus``, ``sonnet``, ``haiku`` become ``ANTHROPIC_DEFAULT_OPUS_MODEL``
(…``_SONNET_``, …``_HAIKU_``) when set, else the newest model of the family the provider has
(:mod:`lsp_agent.model.limits`). On Bedrock a Claude API name of the table becomes its Bedrock
id with the region's cross-region inference-profile prefix (``us.``, ``eu.``, ``apac.``,
``us-gov.``), as Claude Code's defaults are; on Vertex its Vertex name. Any other name (a full
provider id, an inference-profile ARN) is sent unchanged.

A ``[1m]`` suffix (Claude Code's ``sonnet[1m]``: the 1M-token context window) is not part of
any model id: :func:`wire_model` drops it and :func:`wants_1m_context` tells the client to send
the 1M-context beta flag (:data:`CONTEXT_1M_BETA`).

Proxies and certificates: the SDK's HTTP client honours ``HTTPS_PROXY``/``HTTP_PROXY``/
``NO_PROXY`` and ``SSL_CERT_FILE``/``SSL_CERT_DIR`` (it trusts the environment); nothing
here overrides them.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from lsp_agent.model.limits import ALIASES, canonical_name, default_entry, entry_for

Provider = Literal["anthropic", "bedrock", "vertex"]

_TRUE = frozenset({"1", "true", "yes", "on"})

CONTEXT_1M_BETA = "context-1m-2025-08-07"
"""The ``anthropic-beta`` flag that asks for the 1M-token context window."""


def wants_1m_context(model: str) -> bool:
    """Whether ``model`` carries Claude Code's ``[1m]`` suffix."""
    return model.strip().lower().endswith("[1m]")


_EXTRA_MODULES: dict[Provider, tuple[str, ...]] = {
    "bedrock": ("boto3", "botocore"),
    "vertex": ("google.auth",),
    "anthropic": (),
}
_DISPLAY: dict[Provider, str] = {
    "anthropic": "the Claude API",
    "bedrock": "Amazon Bedrock",
    "vertex": "Google Vertex AI",
}


VERTEX_REGION_VARIABLES: dict[str, str] = {
    "claude-opus-4-8": "VERTEX_REGION_CLAUDE_4_8_OPUS",
    "claude-opus-4-7": "VERTEX_REGION_CLAUDE_4_7_OPUS",
    "claude-opus-4-6": "VERTEX_REGION_CLAUDE_4_6_OPUS",
    "claude-opus-4-5": "VERTEX_REGION_CLAUDE_4_5_OPUS",
    "claude-opus-4-1": "VERTEX_REGION_CLAUDE_4_1_OPUS",
    "claude-opus-4": "VERTEX_REGION_CLAUDE_4_0_OPUS",
    "claude-sonnet-4-6": "VERTEX_REGION_CLAUDE_4_6_SONNET",
    "claude-sonnet-4-5": "VERTEX_REGION_CLAUDE_4_5_SONNET",
    "claude-sonnet-4": "VERTEX_REGION_CLAUDE_4_0_SONNET",
    "claude-3-7-sonnet": "VERTEX_REGION_CLAUDE_3_7_SONNET",
    "claude-haiku-4-5": "VERTEX_REGION_CLAUDE_HAIKU_4_5",
    "claude-3-5-haiku": "VERTEX_REGION_CLAUDE_3_5_HAIKU",
}
"""Claude Code's per-model Vertex AI region variables, by the model table's name."""


def _flag(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in _TRUE


@dataclass(frozen=True, kw_only=True)
class ProviderSettings:
    """The provider chosen by the environment and what its client needs. ``region`` is the AWS
    region (Bedrock) or the Vertex location; ``project_id`` the Google Cloud project (Vertex);
    ``base_url`` the endpoint override (``None``: the SDK's default for the provider).
    ``problem`` names a configuration that cannot work (both providers selected), else
    ``None``. ``skip_auth``: requests go out without the cloud's credentials
    (``CLAUDE_CODE_SKIP_BEDROCK_AUTH``/``_VERTEX_AUTH``). ``model_regions``: (model table
    name, Vertex region) pairs from ``VERTEX_REGION_CLAUDE_*``."""

    provider: Provider = "anthropic"
    region: str | None = None
    project_id: str | None = None
    base_url: str | None = None
    problem: str | None = None
    skip_auth: bool = False
    model_regions: tuple[tuple[str, str], ...] = ()

    def region_for(self, model: str | None) -> str | None:
        """The region requests for ``model`` go to: its ``VERTEX_REGION_CLAUDE_*`` override
        (Vertex AI only), else :attr:`region`."""
        if model is None or not self.model_regions:
            return self.region
        entry = entry_for(model)
        overrides = dict(self.model_regions)
        if entry is not None and entry.name in overrides:
            return overrides[entry.name]
        return self.region

    @property
    def display(self) -> str:
        """The provider in words (``Amazon Bedrock``)."""
        return _DISPLAY[self.provider]

    def missing_extra(self) -> str | None:
        """The install hint when the provider's SDK extra is not installed, else ``None``."""
        missing = [m for m in _EXTRA_MODULES[self.provider] if not _importable(m)]
        if not missing:
            return None
        extra = self.provider
        return (
            f"{self.display} needs the '{extra}' extra ({', '.join(missing)} missing): "
            f"pipx install --force './lsp-agent[{extra}]' (or pip install 'lsp-agent[{extra}]')"
        )


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def provider_from_env(environ: Mapping[str, str] | None = None) -> ProviderSettings:
    """The provider selected by ``environ`` (default ``os.environ``); see the module doc."""
    env = os.environ if environ is None else environ
    bedrock = _flag(env, "CLAUDE_CODE_USE_BEDROCK")
    vertex = _flag(env, "CLAUDE_CODE_USE_VERTEX")
    if bedrock and vertex:
        return ProviderSettings(
            problem="CLAUDE_CODE_USE_BEDROCK and CLAUDE_CODE_USE_VERTEX are both set; "
            "choose one provider"
        )
    if bedrock:
        return ProviderSettings(
            provider="bedrock",
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
            base_url=env.get("ANTHROPIC_BEDROCK_BASE_URL") or None,
            skip_auth=_flag(env, "CLAUDE_CODE_SKIP_BEDROCK_AUTH"),
        )
    if vertex:
        return ProviderSettings(
            provider="vertex",
            region=env.get("CLOUD_ML_REGION") or None,
            project_id=env.get("ANTHROPIC_VERTEX_PROJECT_ID") or None,
            base_url=env.get("ANTHROPIC_VERTEX_BASE_URL") or None,
            skip_auth=_flag(env, "CLAUDE_CODE_SKIP_VERTEX_AUTH"),
            model_regions=tuple(
                (name, env[variable].strip())
                for name, variable in VERTEX_REGION_VARIABLES.items()
                if env.get(variable, "").strip()
            ),
        )
    return ProviderSettings(base_url=env.get("ANTHROPIC_BASE_URL") or None)


def inference_profile_prefix(region: str | None) -> str:
    """The cross-region inference-profile prefix for an AWS ``region`` (``us-east-1`` →
    ``us.``, ``eu-west-3`` → ``eu.``, ``ap-northeast-1`` → ``apac.``, ``us-gov-west-1`` →
    ``us-gov.``); empty for other or unknown regions (the base model id is then sent)."""
    if not region:
        return ""
    if region.startswith("us-gov-"):
        return "us-gov."
    for start, prefix in (("us-", "us."), ("ca-", "us."), ("eu-", "eu."), ("ap-", "apac.")):
        if region.startswith(start):
            return prefix
    return ""


def wire_model(
    model: str, settings: ProviderSettings, environ: Mapping[str, str] | None = None
) -> str:
    """The model id to send for ``model`` (a name the user gave: alias, Claude API name or
    provider id) to ``settings.provider``; see the module doc. ``environ`` (default
    ``os.environ``) holds the ``ANTHROPIC_DEFAULT_*_MODEL`` overrides."""
    env = os.environ if environ is None else environ
    name = model.strip()
    if wants_1m_context(name):
        name = name[: -len("[1m]")]
    if name.lower() in ALIASES:
        pinned = env.get(f"ANTHROPIC_DEFAULT_{name.upper()}_MODEL", "").strip()
        if pinned:
            return pinned
        entry = default_entry(name.lower(), settings.provider)  # type: ignore[arg-type]
        if entry is None:
            return name
        name = entry.name
    if settings.provider == "anthropic":
        return name
    if canonical_name(name) != name:
        return name  # already a provider id
    entry = entry_for(name)
    if entry is None or entry.name != name:
        return name  # a dated or unknown name: the user's own id
    if settings.provider == "bedrock" and entry.bedrock_id is not None:
        return inference_profile_prefix(settings.region) + entry.bedrock_id
    if settings.provider == "vertex" and entry.vertex_id is not None:
        return entry.vertex_id
    return name
