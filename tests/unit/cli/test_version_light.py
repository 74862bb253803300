"""``lsp-agent --version`` must stay cheap: it may not import pygls, lsprotocol, anthropic or
pydantic (every subcommand imports its dependencies lazily)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pygls", "lsprotocol", "anthropic", "pydantic", "httpx", "httpx2", "attrs", "cattrs")


def test_version_imports_nothing_heavy() -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lsp_agent", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "lsp-agent 0.1.0\n"
    # -X importtime writes one "import time: self | cumulative | module" line per import.
    imported = {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "lsp_agent" in imported  # the probe itself works
    assert imported.isdisjoint(HEAVY), sorted(imported & set(HEAVY))


def test_cli_module_import_is_light() -> None:
    code = (
        "import sys, lsp_agent.cli, lsp_agent.__main__\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(heavy)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
