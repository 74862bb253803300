"""The demo's verification: finding ruff, the settings it sends, the scenario placeholders and
how a verdict reads in the transcript."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from lsp_agent.demo.runner import BUGGY_FILE, SCENARIO_RESOURCE
from lsp_agent.demo.transcript import Transcript, verification_lines
from lsp_agent.demo.verification import (
    BUGGY_FILE_VERSION,
    diagnostics_options,
    find_ruff,
    ruff_install_hint,
    scenario_variables,
)
from lsp_agent.diagnostics.config import parse_settings
from lsp_agent.testing.scenario import load_scenario


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.skipif(os.name == "nt", reason="POSIX executable bits")
def test_ruff_next_to_the_interpreter_wins_over_path(tmp_path: Path) -> None:
    env_bin, elsewhere = tmp_path / "venv" / "bin", tmp_path / "elsewhere"
    env_bin.mkdir(parents=True)
    elsewhere.mkdir()
    python = env_bin / "python"
    on_path = _executable(elsewhere / "ruff")
    assert find_ruff(python=str(python), path=str(elsewhere)) == str(on_path)
    beside = _executable(env_bin / "ruff")
    assert find_ruff(python=str(python), path=str(elsewhere)) == str(beside)
    assert find_ruff(python=str(tmp_path / "none" / "python"), path=str(tmp_path)) is None


def test_the_settings_sent_are_valid_and_ask_for_fix_mode() -> None:
    settings = parse_settings(diagnostics_options("/opt/ruff"))
    assert settings.verify.mode == "fix"
    (server,) = settings.servers
    assert (server.name, server.command) == ("ruff", ("/opt/ruff", "server"))


@pytest.mark.parametrize("verified", [True, False])
def test_every_scenario_placeholder_is_filled(verified: bool) -> None:
    from importlib import resources

    variables = {"cwd": "/p", **scenario_variables(buggy_file=BUGGY_FILE, verified=verified)}
    path = resources.files("lsp_agent.demo").joinpath(SCENARIO_RESOURCE)
    text = json.dumps(load_scenario(str(path)).with_variables(variables).model_dump(mode="json"))
    assert "{{" not in text
    claim = "ruff reports no new problems for the exact text I wrote"
    assert (claim in text) is verified


def test_a_verdict_reads_as_one_line_per_file_and_source(tmp_path: Path) -> None:
    path = str(tmp_path / BUGGY_FILE)
    clean = {
        "newErrors": 0,
        "complete": True,
        "files": [
            {
                "path": path,
                "version": BUGGY_FILE_VERSION,
                "sources": [{"name": "ruff", "status": "checked"}],
                "new": [],
                "fixed": [],
                "preexisting": 0,
                "uncompared": [],
            }
        ],
    }
    assert verification_lines(clean, root=tmp_path) == [
        f"ruff: clean for version {BUGGY_FILE_VERSION} of {BUGGY_FILE}"
    ]
    broken = {
        "newErrors": 1,
        "complete": False,
        "files": [
            {
                "path": path,
                "version": None,
                "sources": [
                    {"name": "ruff", "status": "checked"},
                    {"name": "mypy", "status": "unknown", "reason": "did not report in time"},
                ],
                "new": [
                    {"line": 3, "character": 5, "severity": "error", "code": "F821", "message": "x"}
                ],
                "fixed": [],
                "preexisting": 2,
                "uncompared": [],
            }
        ],
    }
    assert verification_lines(broken, root=None) == [
        f"ruff: 1 new problem for {path} (on disk)",
        f"mypy: unknown for {path} (on disk) (did not report in time)",
        f"  error {path}:3:5 F821 x",
    ]
    out = io.StringIO()
    transcript = Transcript(out=out, color=False, root=tmp_path)
    transcript.update({"sessionUpdate": "tool_call", "toolCallId": "v", "title": "Checking"})
    transcript.update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "v",
            "status": "completed",
            "title": "Diagnostics: no new problems in money.py",
            "content": [{"type": "content", "content": {"type": "text", "text": "<report>"}}],
            "rawOutput": {"verification": clean},
        }
    )
    assert out.getvalue().splitlines()[-2:] == [
        "  ✓ Diagnostics: no new problems in money.py",
        f"      ruff: clean for version {BUGGY_FILE_VERSION} of {BUGGY_FILE}",
    ]


@pytest.mark.parametrize(
    ("prefix", "hint"),
    [
        ("/home/me/.local/share/pipx/venvs/lsp-agent", "pipx inject lsp-agent ruff"),
        ("/home/me/.local/pipx/venvs/lsp-agent", "pipx inject lsp-agent ruff"),
        ("/home/me/.local/share/uv/tools/lsp-agent", "uv tool install ruff"),
        ("/home/me/project/.venv", "/home/me/project/.venv/bin/python -m pip install ruff"),
    ],
    ids=["pipx", "pipx-old-home", "uv-tool", "venv"],
)
def test_ruff_hint_follows_the_way_lsp_agent_was_installed(prefix: str, hint: str) -> None:
    python = f"{prefix}/bin/python"
    assert ruff_install_hint(prefix=prefix, python=python) == hint


def test_ruff_hint_knows_pipx_and_uv_environments_outside_their_default_homes(
    tmp_path: Path,
) -> None:
    """``PIPX_HOME``/``UV_TOOL_DIR`` elsewhere: the environments are known by the files pipx and
    uv leave in them, not by their folder."""
    pipx_env = tmp_path / "trial-pipx" / "venvs" / "lsp-agent"
    pipx_env.mkdir(parents=True)
    (pipx_env / "pipx_metadata.json").write_text("{}")
    assert ruff_install_hint(prefix=str(pipx_env)) == "pipx inject lsp-agent ruff"
    uv_env = tmp_path / "tools" / "lsp-agent"
    uv_env.mkdir(parents=True)
    (uv_env / "uv-receipt.toml").write_text("[tool]\n")
    assert ruff_install_hint(prefix=str(uv_env)) == "uv tool install ruff"
