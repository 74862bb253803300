"""The bundled demo: the project ships as package data, has one real bug, and the offline
scenario matches it."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

from lsp_agent.demo.runner import (
    BUGGY_FILE,
    PROMPT,
    UNSAVED_COMMENT,
    copy_project,
    permission_summary,
    project_diff,
    snapshot,
)
from lsp_agent.testing.scenario import load_scenario


def test_copy_project_brings_sources_and_tests(tmp_path: Path) -> None:
    copy_project(tmp_path / "p")
    files = snapshot(tmp_path / "p")
    assert BUGGY_FILE in files
    assert "pyproject.toml" in files
    assert sum(name.startswith("tests/test_") for name in files) >= 3
    assert not any("__pycache__" in name for name in files)


def test_project_tests_fail_before_the_fix_and_pass_after(tmp_path: Path) -> None:
    root = tmp_path / "p"
    copy_project(root)

    def test_summary() -> tuple[int, str]:
        # The standard library's runner, as the demo uses it: no pytest in a plain install.
        proc = subprocess.run(
            [sys.executable, "-m", "unittest"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return proc.returncode, proc.stderr.strip().splitlines()[-1]

    code, summary = test_summary()
    assert code == 1
    assert summary == "FAILED (failures=2)"
    # Apply exactly the edit the offline scenario makes.
    scenario = load_scenario(str(resources.files("lsp_agent.demo").joinpath("scenario.json")))
    edits = [
        block.input
        for step in scenario.steps
        if step.response is not None
        for block in step.response.content
        if getattr(block, "name", None) == "Edit"
    ]
    assert len(edits) == 1
    path = root / BUGGY_FILE
    text = path.read_text()
    assert text.count(edits[0]["old_string"]) == 1
    path.write_text(text.replace(edits[0]["old_string"], edits[0]["new_string"]))
    code, summary = test_summary()
    assert code == 0
    assert summary == "OK"


def test_scenario_is_written_for_the_demo() -> None:
    raw = json.loads(resources.files("lsp_agent.demo").joinpath("scenario.json").read_text())
    assert raw["prompt"] == PROMPT
    text = json.dumps(raw)
    assert "{{cwd}}/" + BUGGY_FILE in text
    # The Read result must show the comment the demo types without saving.
    assert "unsaved edit" in UNSAVED_COMMENT
    assert '"contains": "unsaved edit"' in text
    tools = [
        b["name"] for s in raw["steps"] for b in s["response"]["content"] if b["type"] == "tool_use"
    ]
    assert tools == ["Glob", "Bash", "Grep", "Read", "Edit", "Bash"]


def test_project_diff() -> None:
    diff = project_diff({"a.py": "x = 1\n", "gone.py": "y\n"}, {"a.py": "x = 2\n", "new.py": "z"})
    assert "--- a/a.py\n+++ b/a.py\n" in diff
    assert "-x = 1\n+x = 2\n" in diff
    assert "--- a/gone.py\n+++ /dev/null\n" in diff
    assert "--- /dev/null\n+++ b/new.py\n" in diff
    assert project_diff({"a": "1"}, {"a": "1"}) == ""


def test_permission_summary() -> None:
    edit = {
        "toolCall": {
            "title": "Edit a.py",
            "content": [
                {
                    "type": "diff",
                    "path": "/p/a.py",
                    "oldText": "a",
                    "newText": "b",
                    "unifiedDiff": "--- a.py\n+++ a.py\n-a\n+b\n",
                }
            ],
        }
    }
    assert permission_summary(edit) == ("Edit a.py", "--- a.py\n+++ a.py\n-a\n+b\n")
    bash = {"toolCall": {"title": "unittest", "rawInput": {"command": "python -m unittest"}}}
    assert permission_summary(bash) == ("unittest", "$ python -m unittest")
    assert permission_summary({}) == ("a tool call", "")
