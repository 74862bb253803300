"""Editor workspace configuration that can run programs is a protected path: every write
asks, in every mode, through Write/Edit and through Bash, before the file exists too."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.permissions.paths import is_sensitive

PROTECTED = (
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".vscode/launch.json",
    ".idea/workspace.xml",
    ".idea/runConfigurations/x.xml",
    ".zed/tasks.json",
    ".devcontainer/devcontainer.json",
    ".nvim.lua",
    ".nvimrc",
    ".exrc",
    "sub/.EXRC",
    "proj.code-workspace",
    "nested/dir/.vscode/settings.json",
)
MODES = ("default", "acceptEdits", "bypassPermissions")


def engine(root: Path, home: Path, mode: str) -> PermissionEngine:
    return PermissionEngine(mode=mode, roots=(root,), home=home)  # type: ignore[arg-type]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = (tmp_path / "proj").resolve()
    r.mkdir()
    return r


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rel", PROTECTED)
def test_write_and_edit_ask_in_every_mode_before_the_file_exists(
    root: Path, tmp_path: Path, mode: str, rel: str
) -> None:
    path = root / rel
    assert not path.exists()
    e = engine(root, tmp_path / "home", mode)
    for tool in ("Write", "Edit"):
        decision = e.decide(
            tool=tool,
            read_only=False,
            kind="edit",
            paths=(path,),
            raw_input={"file_path": str(path)},
        )
        assert decision.behavior == "ask" and decision.source == "sandbox", (tool, decision)
        assert decision.hard and not decision.can_allow_always


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "command",
    [
        "echo '{}' > .vscode/tasks.json",
        "mkdir -p .vscode && cp /tmp/x .vscode/settings.json",
        "cp /tmp/x .idea/workspace.xml",
        "tee .nvim.lua < /tmp/x",
        "sed -i s/a/b/ .exrc",
        "cd .zed && cp /tmp/x tasks.json",
        "install --target-directory=.devcontainer /tmp/devcontainer.json",
    ],
)
def test_bash_writes_ask_in_every_mode(root: Path, tmp_path: Path, mode: str, command: str) -> None:
    (root / ".zed").mkdir()
    decision = engine(root, tmp_path / "home", mode).decide(
        tool="Bash", read_only=False, kind="execute", paths=(), raw_input={"command": command}
    )
    assert decision.behavior == "ask" and decision.hard, decision


def test_reading_editor_config_is_not_asked_and_look_alikes_are_protected(
    root: Path, tmp_path: Path
) -> None:
    e = engine(root, tmp_path / "home", "default")
    read = e.decide(
        tool="Read",
        read_only=True,
        kind="read",
        paths=(root / ".vscode" / "settings.json",),
        raw_input={},
    )
    assert read.behavior == "allow"
    home = tmp_path / "home"
    assert is_sensitive(root / ".VSCode" / "x.json", home=home)
    assert is_sensitive(root / "\uff0evscode" / "x.json", home=home)  # full-width dot
    assert is_sensitive(root / "vscode" / "x.json", home=home) is None
    assert is_sensitive(root / "my.nvim.lua.bak", home=home) is None
