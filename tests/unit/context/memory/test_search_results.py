"""Grep and Glob results bring in on-demand memory: the files a search lists count as touched
(bounded), in a real session against the scripted Messages-API server with the real tools."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_agent.agent.env import AgentConfig
from lsp_agent.config.store import SettingsStore
from lsp_agent.context.memory.results import MAX_RESULT_PATHS, line_path, result_paths
from lsp_agent.context.memory.store import batch_paths
from lsp_agent.model.anthropic import AnthropicModel
from lsp_agent.protocol.prompt import PromptText
from lsp_agent.sessions.manager import SessionManager
from lsp_agent.testing.scenario import reply, scenario, tool_use
from lsp_agent.testing.scripted import ScriptedServer
from lsp_agent.tools.registry import default_tools

from ...agent.conftest import RecordingHost


def _files(root: Path, *names: str) -> list[Path]:
    out = []
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
        out.append(path)
    return out


def test_result_lines_of_every_grep_and_glob_shape(tmp_path: Path) -> None:
    a, b = _files(tmp_path, "src/a.py", "odd:name/b.py")
    assert line_path(str(a)) == a  # Glob, Grep files_with_matches
    assert line_path(f"{a}:12:def f(x): return x") == a  # Grep content with line numbers
    assert line_path(f"{a}:3") == a  # Grep count
    assert line_path(f"{b}:1:x = 1") == b  # a ':' inside the path itself
    assert line_path(f"{a}-11-context line") is None  # context lines are skipped
    assert line_path("Found 2 files") is None
    assert line_path("(Results are truncated: showing ...)") is None
    assert line_path(str(tmp_path / "src" / "missing.py")) is None
    assert line_path("relative/a.py") is None
    assert line_path(str(tmp_path / "src")) is None  # a folder is not a listed file


def test_only_the_first_files_of_a_result_count(tmp_path: Path) -> None:
    many = _files(tmp_path, *(f"d{i}/f.py" for i in range(MAX_RESULT_PATHS + 10)))
    text = "Found 60 files\n" + "\n".join(str(p) for p in many)
    assert result_paths(text) == tuple(many[:MAX_RESULT_PATHS])
    repeated = "\n".join(f"{many[0]}:{n}:x" for n in range(5))
    assert result_paths(repeated) == (many[0],)


def test_failed_calls_and_other_tools_list_nothing(tmp_path: Path) -> None:
    (a,) = _files(tmp_path, "a.py")
    calls = [
        ("Glob", {"pattern": "**/*.py"}, None),  # failed: no result text
        ("Bash", {"command": "ls"}, str(a)),  # Bash output is not a search result
        ("Grep", {"pattern": "x", "path": str(tmp_path)}, str(a)),
    ]
    assert batch_paths(calls) == (tmp_path, a)


async def test_glob_and_grep_results_load_subfolder_memory_and_path_rules(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "proj").resolve()
    _files(root, "api/handler.ts", "web/page.py", "lib/util.py")
    (root / "api" / "CLAUDE.md").write_text("api folder memory\n")
    (root / "lib" / "CLAUDE.md").write_text("lib folder memory\n")
    rules = root / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "ts.md").write_text("---\npaths: ['**/*.ts']\n---\ntypescript rule\n")
    (rules / "md.md").write_text("---\npaths: ['**/*.md']\n---\nmarkdown rule\n")
    (root / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryEnabled": False}))
    home = tmp_path / "home"
    home.mkdir()
    server = ScriptedServer(
        scenario=scenario(
            reply(tool_use("Glob", {"pattern": "**/*.ts"})),
            reply(
                tool_use("Grep", {"pattern": "x = 1", "output_mode": "content", "glob": "lib/*"})
            ),
            reply("done"),
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
        await session.prompt([PromptText(text="find the handlers")])
        await manager.aclose()
    finally:
        await server.stop()
    after_glob = json.dumps(server.requests[1]["messages"][-1])
    assert "api folder memory" in after_glob and "typescript rule" in after_glob
    assert "lib folder memory" not in after_glob and "markdown rule" not in after_glob
    after_grep = json.dumps(server.requests[2]["messages"][-1])
    assert "lib folder memory" in after_grep
    assert "api folder memory" not in after_grep  # once per session
    assert "web" not in after_grep and "markdown rule" not in json.dumps(server.requests)
