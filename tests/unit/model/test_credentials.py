"""The no-SDK check for a run without credentials: "surely none" only when no step of the
SDK's credential chain can apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.model.credentials import surely_without_credentials


@pytest.fixture(autouse=True)
def bare(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_nothing_anywhere_is_surely_none() -> None:
    assert surely_without_credentials(api_key=None, auth_token=None, environ={})


@pytest.mark.parametrize(
    "name",
    ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR"],
)
def test_any_step_of_the_chain_leaves_it_to_the_sdk(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not surely_without_credentials(api_key=None, auth_token=None, environ={name: "x"})
    monkeypatch.setenv(name, "x")
    assert not surely_without_credentials(api_key=None, auth_token=None, environ={})


def test_a_key_given_or_a_profile_folder_on_disk(bare: Path) -> None:
    assert not surely_without_credentials(api_key="k", auth_token=None, environ={})
    assert not surely_without_credentials(api_key=None, auth_token="t", environ={})
    (bare / ".config" / "anthropic").mkdir(parents=True)
    assert not surely_without_credentials(api_key=None, auth_token=None, environ={})
