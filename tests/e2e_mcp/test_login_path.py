"""stdio servers whose command only the login shell's PATH finds (an editor started from a
desktop): a fake login shell, asked once per pool, its noise ignored, a hanging one bounded."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

from lsp_agent.mcp.login_path import LoginPath, joined_path
from tests.e2e_mcp.conftest import FIXTURE
from tests.e2e_mcp.test_pool import by_name, call, wait_state


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _fake_shell(tmp_path: Path, bin_dir: Path, *, hang: bool = False) -> Path:
    """A "login shell" whose start-up adds ``bin_dir`` to PATH and prints a banner; it logs
    each start to ``shell.log``."""
    log = tmp_path / "shell.log"
    body = "sleep 30\n" if hang else ""
    return _executable(
        tmp_path / "fake-shell",
        "#!/bin/sh\n"
        f'echo "started $*" >> "{log}"\n'
        'echo "Welcome! PATH=/not/this"\n'
        f"{body}"
        f'PATH="{bin_dir}:$PATH"; export PATH\n'
        'shift 3\neval "$1"\n',
    )


def _server_command(bin_dir: Path) -> None:
    bin_dir.mkdir()
    _executable(bin_dir / "fixture-mcp", f'#!/bin/sh\nexec "{sys.executable}" "{FIXTURE}" "$@"\n')


async def test_a_command_on_the_login_path_starts_and_the_shell_is_asked_once(
    make_pool: Any, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "login-bin"
    _server_command(bin_dir)
    shell = _fake_shell(tmp_path, bin_dir)
    environ = {**os.environ, "PATH": os.defpath, "SHELL": str(shell)}
    pool = make_pool(
        {"a": {"command": "fixture-mcp"}, "b": {"command": "fixture-mcp"}}, environ=environ
    )
    tools = await pool.tools()
    await wait_state(pool, "a", "ready")
    await wait_state(pool, "b", "ready")
    child_path = (await call(by_name(tools, "mcp__a__env"), {"name": "PATH"})).text
    assert child_path.split(os.pathsep)[0] == os.defpath.split(os.pathsep)[0]  # ours first
    assert str(bin_dir) in child_path.split(os.pathsep)
    assert (tmp_path / "shell.log").read_text().count("started") == 1
    assert "-i -l -c" in (tmp_path / "shell.log").read_text()


async def test_without_the_login_path_the_error_names_the_command(
    make_pool: Any, tmp_path: Path
) -> None:
    environ = {**os.environ, "PATH": os.defpath, "SHELL": "/nonexistent/shell"}
    pool = make_pool({"a": {"command": "fixture-mcp"}}, environ=environ)
    await pool.tools()
    await wait_state(pool, "a", "failed")
    (status,) = pool.statuses()
    assert "command not found: 'fixture-mcp'" in (status.error or "")


async def test_a_hanging_login_shell_is_bounded_and_cached(tmp_path: Path) -> None:
    bin_dir = tmp_path / "login-bin"
    shell = _fake_shell(tmp_path, bin_dir, hang=True)
    resolver = LoginPath(environ={**os.environ, "SHELL": str(shell)}, timeout_s=0.5)
    assert await resolver.path() is None
    assert await resolver.path() is None
    assert (tmp_path / "shell.log").read_text().count("started") == 1


async def test_the_path_is_read_when_the_shell_writes_it_after_a_pause(tmp_path: Path) -> None:
    # The banner and the PATH arrive as separate pipe writes (bash's own printf writes its
    # leading newline alone, too): the PATH in a later chunk is still found.
    shell = _executable(
        tmp_path / "slow-shell",
        '#!/bin/sh\necho "Welcome!"\nsleep 0.3\nPATH="/from/login:$PATH"\nshift 3\neval "$1"\n',
    )
    resolver = LoginPath(environ={**os.environ, "SHELL": str(shell)})
    value = await resolver.path()
    assert value is not None
    assert value.split(os.pathsep)[0] == "/from/login"


def test_joined_path_keeps_ours_first_without_duplicates() -> None:
    sep = os.pathsep
    assert joined_path(f"/a{sep}/b", f"/b{sep}/c{sep}{sep}/c") == f"/a{sep}/b{sep}/c"
