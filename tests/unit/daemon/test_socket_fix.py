"""What ``daemon status``/``stop`` tell the user to do about a daemon socket the client will
not trust: the fix for the folder or the socket when they are the user's own."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from lsp_agent.cli.daemon_commands import untrusted_socket
from lsp_agent.daemon.paths import socket_fix, socket_path


def _daemon_socket(runtime: Path) -> Path:
    path = socket_path({"XDG_RUNTIME_DIR": str(runtime)})
    path.parent.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(path))
    os.chmod(path, 0o600)
    return path


def test_a_folder_open_to_others_is_made_private_again(tmp_path: Path) -> None:
    path = _daemon_socket(tmp_path)
    os.chmod(path.parent, 0o750)
    assert socket_fix(path) == f"make the folder private again: chmod 700 {path.parent}"


def test_a_socket_open_to_others_is_made_private_again(tmp_path: Path) -> None:
    path = _daemon_socket(tmp_path)
    os.chmod(path, 0o666)
    said = untrusted_socket({"XDG_RUNTIME_DIR": str(tmp_path)})
    assert said is not None
    assert said.startswith(f"cannot use the daemon socket: {path} has loose permissions")
    assert said.endswith(f"make the socket private again: chmod 600 {path}")


def test_a_private_or_missing_socket_is_not_a_problem(tmp_path: Path) -> None:
    assert untrusted_socket({"XDG_RUNTIME_DIR": str(tmp_path)}) is None
    _daemon_socket(tmp_path)
    assert untrusted_socket({"XDG_RUNTIME_DIR": str(tmp_path)}) is None


def test_something_not_a_socket_is_left_to_the_user(tmp_path: Path) -> None:
    path = socket_path({"XDG_RUNTIME_DIR": str(tmp_path)})
    path.parent.mkdir(mode=0o700)
    path.write_text("")
    os.chmod(path, 0o600)
    assert "set XDG_RUNTIME_DIR to a folder of your own" in socket_fix(path)
