"""A background run (``lsp-agent run -p --bg``, a real daemon, its own scripted model) for the
Neovim tests that show one in the editor."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lsp_agent.testing.scenario import Scenario
from lsp_agent.testing.scripted import scripted_env
from lsp_agent.testing.thread import ScriptedServerThread

CLI_TIMEOUT_S = 60


@dataclass(frozen=True, kw_only=True)
class BackgroundRun:
    """The started run's ids; ``editor_env``, the variables that make the editor's server see
    the same daemon and session store; ``cli`` runs ``lsp-agent ARGS`` in the project with the
    run's environment."""

    run_id: str
    session_id: str
    editor_env: dict[str, str]
    cli: Callable[..., subprocess.CompletedProcess[str]]


@contextmanager
def background_run(
    tmp_path: Path, root: Path, steps: Scenario, prompt: str, env: dict[str, str] | None = None
) -> Iterator[BackgroundRun]:
    """Start ``prompt`` as a background run in ``root`` against a model replaying ``steps``
    (``env``: more variables for the run); kill it and stop the daemon on the way out."""
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    shared = {
        "XDG_RUNTIME_DIR": str(runtime),
        "LSP_AGENT_DATA_DIR": str(tmp_path / "xdg" / "data" / "lsp-agent"),
    }
    with ScriptedServerThread(scenario=steps, variables={}) as model:
        run_env = {
            **scripted_env(model.base_url),
            **shared,
            "LSP_AGENT_MAX_RETRIES": "0",
            **(env or {}),
        }

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "lsp_agent", *args],
                env=run_env,
                cwd=root,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=CLI_TIMEOUT_S,
                check=False,
            )

        started = cli("run", "-p", "--bg", prompt)
        assert started.returncode == 0, started.stderr
        run_id, session_id = started.stdout.strip().split("\t")
        try:
            yield BackgroundRun(run_id=run_id, session_id=session_id, editor_env=shared, cli=cli)
        finally:
            cli("kill", run_id)
            cli("daemon", "stop")
