"""`make test` names what it needs instead of skipping: the VS Code step of the suite
(.ci/vscode.sh, which `make test` runs first) fails with a message naming Node.js >= 20 when
node is missing or too old."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _path_with(tmp_path: Path, tools: dict[str, str]) -> str:
    """A PATH holding only ``dirname`` and the given fake tools (name -> shell script body)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    dirname = shutil.which("dirname")
    assert dirname is not None
    (bin_dir / "dirname").symlink_to(dirname)
    for name, body in tools.items():
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)
    return str(bin_dir)


def _run(path: str) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run(
        [bash, str(ROOT / ".ci" / "vscode.sh"), "--install-only"],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_missing_node_is_named(tmp_path: Path) -> None:
    proc = _run(_path_with(tmp_path, {}))
    assert proc.returncode == 1
    assert "need Node.js >= 20 with npm" in proc.stderr
    assert "node or npm is not on PATH" in proc.stderr


def test_old_node_is_named(tmp_path: Path) -> None:
    fake_node = 'case "$1" in -p) echo 18 ;; *) echo v18.19.0 ;; esac'
    proc = _run(_path_with(tmp_path, {"node": fake_node, "npm": "exit 0"}))
    assert proc.returncode == 1
    assert "this node is v18.19.0. Install Node.js 20 or newer" in proc.stderr
