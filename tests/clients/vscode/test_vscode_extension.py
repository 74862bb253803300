"""Run the VS Code extension's own test suites (editor-clients/vscode) from pytest.

Three suites, each a ``node --test`` run of the compiled TypeScript tests:

- ``unit``: the extension's logic against a small fake of the ``vscode`` API;
- ``webview``: the chat panel in headless Chromium (screenshots in ``test-artifacts/``);
- ``integration``: the extension's real vscode-languageclient node client driving the real
  ``lsp-agent serve`` (this interpreter's) with the scripted model.

Prerequisites (Node >= 20, the npm packages, Chromium) are installed by ``.ci/vscode.sh``. A
missing one fails the test with a message saying how to install it: nothing here is skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
EXTENSION = REPO_ROOT / "editor-clients" / "vscode"
CHROMIUM = os.environ.get("LSP_AGENT_CHROMIUM", "/usr/bin/chromium")
RUN_TIMEOUT_S = 600.0
"""Bound on one suite run (s): stops a hung run; never a timing assertion."""

INSTALL_HINT = "run .ci/vscode.sh (apt-get install chromium; npm ci in editor-clients/vscode)"


def _require_node() -> str:
    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        pytest.fail(
            f"node/npm not found on PATH: install Node.js >= 20; {INSTALL_HINT}", pytrace=False
        )
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout
    major = int(version.strip().lstrip("v").split(".")[0])
    if major < 20:
        pytest.fail(
            f"Node.js {version.strip()} is too old: the extension needs >= 20", pytrace=False
        )
    if not (EXTENSION / "node_modules" / "vscode-languageclient").is_dir():
        pytest.fail(f"editor-clients/vscode/node_modules is missing: {INSTALL_HINT}", pytrace=False)
    return npm


def _run_suite(script: str) -> str:
    """``npm run <script>`` in the extension; returns its output after checking that node's
    test runner ran tests and none failed."""
    npm = _require_node()
    env = {**os.environ, "LSP_AGENT_PYTHON": sys.executable, "LSP_AGENT_CHROMIUM": CHROMIUM}
    proc = subprocess.run(
        [npm, "run", "--silent", script],
        cwd=EXTENSION,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    output = proc.stdout + proc.stderr
    tail = "\n".join(output.splitlines()[-80:])
    assert proc.returncode == 0, f"npm run {script} failed ({proc.returncode}):\n{tail}"
    passed = re.search(r"^# pass (\d+)$", output, re.MULTILINE)
    failed = re.search(r"^# fail (\d+)$", output, re.MULTILINE)
    assert passed and failed, f"no test summary from node --test:\n{tail}"
    assert int(failed.group(1)) == 0, tail
    assert int(passed.group(1)) > 0, f"node --test ran no tests:\n{tail}"
    return output


def test_unit_suite() -> None:
    _run_suite("test")


def test_webview_in_headless_chromium() -> None:
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"Chromium not found at {CHROMIUM}: {INSTALL_HINT}", pytrace=False)
    _run_suite("test:webview")
    shots = sorted(p.name for p in (EXTENSION / "test-artifacts").glob("*.png"))
    assert {"panel-permission.png", "panel-permission-scope.png"} <= set(shots), shots


def test_extension_drives_the_real_server() -> None:
    _run_suite("test:integration")
