"""Which store the OAuth credentials go to: a real ``keyring`` backend counts, the backends
that store nothing do not; ``LSP_AGENT_MCP_OAUTH_STORE=file`` forces the file; and with no
backend (the tests' ``fail.Keyring``) the 0600 file is used through the same functions."""

from __future__ import annotations

import stat
from pathlib import Path

import keyring
from keyring.backends import chainer, fail, null

from lsp_agent.mcp.oauth_store import oauth_path
from lsp_agent.mcp.oauth_tokens import (
    STORE_ENV,
    forget_login,
    is_real_backend,
    keyring_backend,
    load_entry,
    update_entry,
)
from tests.keyrings.file_keyring import FileKeyring


class EmptyChainer(chainer.ChainerBackend):
    backends = ()  # type: ignore[assignment]  # nothing to chain


class OneChainer(chainer.ChainerBackend):
    backends = (FileKeyring(),)  # type: ignore[assignment]


def test_only_a_backend_that_stores_counts_as_a_keyring() -> None:
    assert not is_real_backend(fail.Keyring())
    assert not is_real_backend(null.Keyring())
    assert not is_real_backend(EmptyChainer())
    assert is_real_backend(OneChainer())
    assert is_real_backend(FileKeyring())


def test_the_file_store_can_be_forced() -> None:
    assert keyring_backend({STORE_ENV: "file"}) is None
    assert keyring_backend({STORE_ENV: " FILE "}) is None


def test_without_a_backend_the_private_file_is_the_store(tmp_path: Path) -> None:
    assert isinstance(keyring.get_keyring(), fail.Keyring)  # the tests' default
    assert keyring_backend({}) is None
    update_entry(tmp_path, "s", "https://a/mcp", tokens={"access_token": "t"})
    assert stat.S_IMODE(oauth_path(tmp_path).stat().st_mode) == 0o600
    assert load_entry(tmp_path, "s", "https://a/mcp")["tokens"] == {"access_token": "t"}
    forget_login(tmp_path, "s", "https://a/mcp")
    assert load_entry(tmp_path, "s", "https://a/mcp") == {}


UPDATER = """
import sys
from pathlib import Path
from lsp_agent.mcp.oauth_tokens import update_entry
for i in range(40):
    update_entry(Path(sys.argv[1]), "s", "https://a/mcp", **{f"{sys.argv[2]}{i}": i})
"""


def test_two_processes_changing_one_keyring_item_lose_nothing(tmp_path: Path) -> None:
    """Each process sets 40 fields of the same entry: the lock keeps all 80."""
    import json
    import os
    import subprocess
    import sys

    from lsp_agent.mcp.oauth_tokens import KEYRING_SERVICE
    from tests.keyrings.file_keyring import BACKEND, FILE_ENV, items

    root = Path(__file__).resolve().parents[3]
    env = dict(os.environ)
    env.update(PYTHON_KEYRING_BACKEND=BACKEND, **{FILE_ENV: str(tmp_path / "keyring.json")})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    procs = [
        subprocess.Popen([sys.executable, "-c", UPDATER, str(tmp_path), tag], env=env)
        for tag in ("a", "b")
    ]
    assert [p.wait(60) for p in procs] == [0, 0]
    entry = json.loads(items(tmp_path / "keyring.json")[f"{KEYRING_SERVICE}\ns https://a/mcp"])
    assert {f"{t}{i}" for t in "ab" for i in range(40)} <= entry.keys()
    assert not oauth_path(tmp_path).exists()  # all in the keyring, none in the file
