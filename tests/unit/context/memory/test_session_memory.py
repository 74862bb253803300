"""Memory in a real session (settings store, the real SDK, the scripted Messages-API server):
the InstructionsLoaded hook fires once per file with Claude Code's fields, and the memory
block of each request follows the files on disk."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from lsp_agent.agent.env import AgentConfig
from lsp_agent.config.store import SettingsStore
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.manager import SessionManager
from lsp_agent.testing.scenario import reply, scenario, tool_use
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.tools.registry import default_tools

from ...agent.conftest import RecordingHost


async def test_instructions_loaded_fires_once_per_file_with_claude_codes_fields(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "proj").resolve()
    (root / "sub").mkdir(parents=True)
    (root / "CLAUDE.md").write_text("root memory @notes.md\n")
    (root / "notes.md").write_text("notes\n")
    (root / "sub" / "CLAUDE.md").write_text("sub memory\n")
    (root / "sub" / "x.py").write_text("x = 1\n")
    rules = root / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "py.md").write_text("---\npaths: ['**/*.py']\n---\npython rule\n")
    log = tmp_path / "loaded.jsonl"
    hook = tmp_path / "hook.py"
    hook.write_text(
        "import sys\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(sys.stdin.read().strip() + '\\n')\n"
    )
    (root / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "InstructionsLoaded": [
                        {"hooks": [{"type": "command", "command": f"{sys.executable} {hook}"}]}
                    ]
                },
                "autoMemoryEnabled": False,
            }
        )
    )
    home = tmp_path / "home"
    home.mkdir()
    server = ScriptedServer(
        scenario=scenario(
            reply(tool_use("Read", {"file_path": str(root / "sub" / "x.py")})),
            reply("done"),
            reply("again"),
        )
    )
    base_url = await server.start()
    manager = SessionManager(
        host=RecordingHost(),
        model_factory=lambda: AnthropicModel(api_key="k", base_url=base_url, max_retries=0),
        config=AgentConfig(model="claude-test"),
        tools_factory=default_tools,
        settings=lambda cwd: SettingsStore(
            cwd=cwd, home=home, managed_path=tmp_path / "none.json", trusted=True
        ),
        managed_memory=tmp_path / "no-managed" / "CLAUDE.md",
    )
    try:
        session = manager.new(cwd=root)
        await session.prompt([PromptText(text="read sub/x.py")])
        await session.prompt([PromptText(text="again")])
        await manager.aclose()
    finally:
        await server.stop()
    for _ in range(100):  # the hooks run in the background; aclose waited for them
        if log.exists():
            break
        await asyncio.sleep(0.05)
    events = [json.loads(line) for line in log.read_text().splitlines()]
    by_file = {e["file_path"]: e for e in events}
    assert len(events) == len(by_file) == 4  # once per file, also over two turns
    assert by_file[str(root / "CLAUDE.md")]["load_reason"] == "session_start"
    assert by_file[str(root / "CLAUDE.md")]["memory_type"] == "Project"
    assert by_file[str(root / "notes.md")]["load_reason"] == "include"
    assert by_file[str(root / "notes.md")]["parent_file_path"] == str(root / "CLAUDE.md")
    sub = by_file[str(root / "sub" / "CLAUDE.md")]
    assert sub["load_reason"] == "nested_traversal"
    assert sub["trigger_file_path"] == str(root / "sub" / "x.py")
    rule = by_file[str(rules / "py.md")]
    assert rule["load_reason"] == "path_glob_match" and rule["globs"] == ["**/*.py"]
    assert all(e["hook_event_name"] == "InstructionsLoaded" for e in events)
    second = json.dumps(server.requests[1]["messages"][-1])
    assert "sub memory" in second and "python rule" in second
