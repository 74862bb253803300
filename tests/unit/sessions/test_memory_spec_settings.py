"""A session's memory follows its settings: the options read from them are worked out again
when the settings are reloaded (and only then), so an edit applies from the next check."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_agent.agent.env import AgentConfig
from lsp_agent.config.store import SettingsStore
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.sessions.manager import SessionManager

from ..agent.conftest import RecordingHost


def test_memory_options_follow_a_settings_reload(tmp_path: Path) -> None:
    root = (tmp_path / "proj").resolve()
    (root / ".claude").mkdir(parents=True)
    settings = root / ".claude" / "settings.json"
    settings.write_text(json.dumps({"env": {"SOMETHING": "1"}}))
    home = tmp_path / "home"
    home.mkdir()
    store = SettingsStore(cwd=root, home=home, trusted=True)
    manager = SessionManager(
        host=RecordingHost(),
        # Never asked: nothing here is prompted.
        model_factory=lambda: AnthropicModel(api_key="unused", base_url="http://127.0.0.1:9"),
        config=AgentConfig(model="m"),
        settings=lambda cwd: store,
    )
    memory = manager.new(cwd=root).memory
    assert memory is not None
    first = memory.spec()
    assert first.trusted is True
    assert first.auto_memory is not None and first.auto_memory.name == "MEMORY.md"
    assert memory.spec() == first

    settings.write_text(json.dumps({"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}}))
    assert memory.spec() == first  # not read again before the settings are reloaded
    store.reload()
    assert memory.spec().auto_memory is None
    store.set_trusted(False)
    assert memory.spec().trusted is False
