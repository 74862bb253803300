"""Settings keys that other modules read from the validated settings (memory options,
background requests, automatic compaction) reach them from real settings files. They used
to be dropped by validation, so ``autoMemoryEnabled: false`` and the others had no effect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_agent.agent.env import AgentConfig
from lsp_agent.config.store import SettingsStore
from lsp_agent.context.memory.options import memory_options
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.sessions.context_wiring import build_engine
from lsp_agent.sessions.manager import SessionManager
from lsp_agent.sessions.session import Session
from lsp_agent.sessions.titles import background_requests
from lsp_agent.tools.registry import default_tools

from ..agent.conftest import RecordingHost

SETTINGS = {
    "autoMemoryEnabled": False,
    "claudeMdExcludes": ["**/vendor/CLAUDE.md"],
    "backgroundRequests": False,
    "autoCompact": False,
    "notASettingsKey": 1,
}


def _store(root: Path, home: Path, tmp_path: Path) -> SettingsStore:
    return SettingsStore(cwd=root, home=home, managed_path=tmp_path / "none.json", trusted=True)


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(json.dumps(SETTINGS))
    home = tmp_path / "home"
    home.mkdir()
    return root, home


def test_validated_settings_keep_the_keys_others_read(
    project: tuple[Path, Path], tmp_path: Path
) -> None:
    root, home = project
    layers = [
        (layer.source, layer.settings.model_extra or {})
        for layer in _store(root, home, tmp_path).loaded.applied()
    ]
    extras = {k: v for _, extra in layers for k, v in extra.items()}
    assert extras == {k: v for k, v in SETTINGS.items() if k != "notASettingsKey"}
    options = memory_options(layers)
    assert options.auto_memory is False
    assert options.excludes == ("**/vendor/CLAUDE.md",)


def _session(root: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    """A session of ``root`` whose settings come from its files only (the environment's
    switches for the same behaviour removed)."""
    monkeypatch.delenv("LSP_AGENT_BACKGROUND_REQUESTS", raising=False)
    monkeypatch.delenv("DISABLE_AUTO_COMPACT", raising=False)
    manager = SessionManager(
        host=RecordingHost(),
        model_factory=lambda: AnthropicModel(api_key="k", base_url="http://127.0.0.1:9"),
        config=AgentConfig(model="claude-test"),
        tools_factory=default_tools,
        settings=lambda cwd: _store(cwd, home, tmp_path),
        managed_memory=tmp_path / "no-managed" / "CLAUDE.md",
    )
    return manager.new(cwd=root)


def test_a_session_honours_them(
    project: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, home = project
    session = _session(root, home, tmp_path, monkeypatch)
    assert background_requests(session).enabled is False
    assert build_engine(session).policy.auto is False


def test_the_defaults_hold_without_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    session = _session(root, home, tmp_path, monkeypatch)
    assert background_requests(session).enabled is True
    assert build_engine(session).policy.auto is True
