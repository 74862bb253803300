"""The demo's verification: a managed ``ruff server`` checks every edit the agent makes.

The demo's editor sends ``initializationOptions.lspAgent.diagnostics`` with one managed server,
the ``ruff`` executable of the demo's own environment (next to the Python running the demo,
else on ``PATH``), in ``fix`` mode: after the agent's edit the model reads ruff's report for the
exact buffer version it wrote, and a turn that leaves new errors is sent back to fix them.
Without ruff the demo says so and runs unverified.

The bundled offline scenario refers to the verdict through two placeholders
(:func:`scenario_variables`): what the request after the edit must contain, and the clause of
the final answer that claims it, both empty when verification is unavailable.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

VERIFY_TIMEOUT_MS = 10_000
"""Cap on the wait for ruff's report (ms). Ruff answers in milliseconds; the generous cap only
matters on a very slow machine, where the verdict would otherwise be "unknown"."""

BUGGY_FILE_VERSION = 3
"""Editor version of the buggy file after the agent's edit: opened (1), the user's unsaved
comment (2), the edit (3)."""


def find_ruff(*, python: str | None = None, path: str | None = None) -> str | None:
    """The ``ruff`` executable next to ``python`` (default: the running interpreter, which in a
    virtual environment is where ``pip install ruff`` puts it), else on ``path`` (default
    ``$PATH``); ``None`` when there is none."""
    folder = Path(python or sys.executable).parent
    beside = folder / ("ruff.exe" if os.name == "nt" else "ruff")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("ruff", path=path)


def ruff_install_hint(*, prefix: str | None = None, python: str | None = None) -> str:
    """The command that makes ruff available to the demo, for the way lsp-agent was installed:
    a pipx environment (``prefix``, default ``sys.prefix``, holds pipx's ``pipx_metadata.json``
    or lies in a ``pipx/venvs/`` folder) → ``pipx inject NAME ruff`` (NAME: the environment's
    folder name), which puts ruff next to the interpreter where :func:`find_ruff` looks first;
    a uv tool environment (``uv-receipt.toml``, or a ``uv/tools/`` folder) → ``uv tool install
    ruff`` (ruff on ``PATH``); otherwise ``pip install ruff`` run by ``python`` (default: the
    running interpreter), so it lands next to it."""
    root = Path(prefix or sys.prefix)
    where = root.as_posix()
    if (root / "pipx_metadata.json").is_file() or "/pipx/venvs/" in where:
        return f"pipx inject {root.name} ruff"
    if (root / "uv-receipt.toml").is_file() or "/uv/tools/" in where:
        return "uv tool install ruff"
    return f"{python or sys.executable} -m pip install ruff"


def diagnostics_options(ruff: str) -> dict[str, Any]:
    """``initializationOptions.lspAgent.diagnostics`` with ``ruff server`` as the managed
    server for Python files and ``verify.mode`` ``fix``."""
    return {
        "verify": {"mode": "fix", "timeoutMs": VERIFY_TIMEOUT_MS},
        "servers": [
            {
                "name": "ruff",
                "command": [ruff, "server"],
                "filetypes": ["*.py", "*.pyi"],
                "languageId": "python",
            }
        ],
    }


def scenario_variables(*, buggy_file: str, verified: bool) -> dict[str, str]:
    """Values of the offline scenario's ``{{ruff_verdict}}`` (a substring the request after
    the edit must contain: ruff's verdict on the edited buffer version) and ``{{ruff_claim}}``
    (the final answer's clause about it). Both are empty without verification."""
    if not verified:
        return {"ruff_verdict": "", "ruff_claim": ""}
    return {
        "ruff_verdict": (
            f"{buggy_file} (editor version {BUGGY_FILE_VERSION}; checked by ruff): no new problems"
        ),
        "ruff_claim": (
            f", and ruff reports no new problems for the exact text I wrote (editor version "
            f"{BUGGY_FILE_VERSION} of {buggy_file})"
        ),
    }
