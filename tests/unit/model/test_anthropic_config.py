"""Model name and environment resolution, and the lazy SDK import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import lsp_agent
from lsp_agent.model.anthropic import AnthropicModel, resolve_model_name
from lsp_agent.model.limits import DEFAULT_MODEL


def test_resolve_model_name_prefers_explicit_then_env_then_default() -> None:
    assert resolve_model_name("claude-x", {"ANTHROPIC_MODEL": "claude-env"}) == "claude-x"
    assert resolve_model_name(None, {"ANTHROPIC_MODEL": "claude-env"}) == "claude-env"
    assert resolve_model_name("", {"ANTHROPIC_MODEL": ""}) == DEFAULT_MODEL
    assert resolve_model_name(None, {}) == DEFAULT_MODEL


def test_from_env_reads_key_token_and_base_url() -> None:
    model = AnthropicModel.from_env(
        {"ANTHROPIC_AUTH_TOKEN": "tok", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}
    )
    assert model.endpoint == "http://127.0.0.1:9"
    both = AnthropicModel.from_env({"ANTHROPIC_API_KEY": "k", "ANTHROPIC_AUTH_TOKEN": "t"})
    assert both._api_key == "k"
    assert both._auth_token is None


def test_key_and_token_together_are_refused() -> None:
    with pytest.raises(ValueError, match="not both"):
        AnthropicModel(api_key="k", auth_token="t")


def test_importing_the_adapter_does_not_import_the_sdk() -> None:
    root = str(Path(lsp_agent.__file__).resolve().parent.parent)
    code = (
        "import sys; import lsp_agent.model.anthropic, lsp_agent.testing.scripted; "
        "print('anthropic' in sys.modules, 'httpx2' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]
