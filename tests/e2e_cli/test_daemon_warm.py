"""The daemon's warm state never stands in for a run's own: settings, the home directory and
the environment are read by each run, after the fork, so a change between two runs handed to
the same daemon reaches the second one."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import reply, scenario
from tests.e2e_cli.conftest import daemon_command, run_cli

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED"), reason="the daemon needs Linux peer credentials"
)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Path]:
    """A private runtime directory with a daemon started in it (stopped afterwards)."""
    base = tmp_path / "run"
    base.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(base)}
    started = daemon_command("start", env)
    assert started.returncode == 0, started.stderr
    yield base
    daemon_command("stop", env)


def _served(runtime: Path) -> str:
    return daemon_command("status", {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}).stdout


def _init_model(project: Path, runtime: Path, **extra: str) -> str:
    """The model a daemon-run ``run -p`` names in its init event."""
    result = run_cli(
        ["run", "-p", "hi", "--output-format", "stream-json"],
        scenario=scenario(reply("Hello."), name="hello"),
        cwd=project,
        extra_env={"XDG_RUNTIME_DIR": str(runtime), **extra},
    )
    assert result.code == 0, result.proc.stderr
    assert result.proc.stderr == ""
    init = next(e for e in result.events() if e.get("subtype") == "init")
    return str(init["model"])


def _write_settings(home: Path, model: str) -> None:
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"model": model}))


def test_a_user_settings_change_reaches_the_next_run(
    project: Path, runtime: Path, isolated_home: Path
) -> None:
    _write_settings(isolated_home, "claude-first-model")
    assert _init_model(project, runtime) == "claude-first-model"
    settings = isolated_home / ".claude" / "settings.json"
    before = settings.stat()
    _write_settings(isolated_home, "claude-other-model")  # the same size
    # Even an edit that keeps the size and the modification time is seen.
    os.utime(settings, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _init_model(project, runtime) == "claude-other-model"
    assert "2 served" in _served(runtime)


def test_each_run_reads_the_home_directory_it_was_started_with(
    project: Path, runtime: Path, tmp_path: Path
) -> None:
    homes = {name: tmp_path / name for name in ("home-a", "home-b")}
    for name, home in homes.items():
        _write_settings(home, f"claude-{name}")
    seen = [_init_model(project, runtime, HOME=str(homes[name])) for name in ("home-a", "home-b")]
    assert seen == ["claude-home-a", "claude-home-b"]
    assert "2 served" in _served(runtime)
