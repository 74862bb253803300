"""Whether the Anthropic API client surely has no credentials, decided without the SDK.

Importing the SDK costs seconds on a cold start, and a run without a key must fail at once
with the plain "no credentials" error. The SDK's credential chain (``anthropic.lib.credentials``)
takes, in order: ``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, a profile named by
``ANTHROPIC_PROFILE``, workload identity federation (``ANTHROPIC_FEDERATION_RULE_ID`` with an
``ANTHROPIC_IDENTITY_TOKEN[_FILE]``), and a profile on disk under ``ANTHROPIC_CONFIG_DIR`` or
``~/.config/anthropic`` (``%APPDATA%\\Anthropic`` on Windows). Only when none of them can
apply is the answer "surely none"; otherwise the SDK decides, as before.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

_CHAIN_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
)


def surely_without_credentials(
    *, api_key: str | None, auth_token: str | None, environ: Mapping[str, str] | None = None
) -> bool:
    """Whether no step of the SDK's credential chain can give a key or token: none passed
    (``api_key``, ``auth_token``), none of its variables set in ``environ`` (default: the
    process environment, which the SDK reads), and no SDK config folder on disk."""
    if api_key or auth_token:
        return False
    env = os.environ if environ is None else environ
    if any(env.get(name) or os.environ.get(name) for name in _CHAIN_VARIABLES):
        return False
    return not _config_dir().exists()


def no_credentials_message(endpoint: str) -> str:
    """The error for a model endpoint without credentials (the run -p hint keys on it)."""
    return (
        f"No credentials for the model endpoint {endpoint}: set ANTHROPIC_API_KEY "
        "or ANTHROPIC_AUTH_TOKEN"
    )


def _config_dir() -> Path:
    """The SDK's default config folder (``anthropic.lib.credentials._constants``)."""
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or Path.home()) / "Anthropic"
    return Path.home() / ".config" / "anthropic"
