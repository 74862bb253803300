"""Session-wide guards for the whole suite.

Network: tests reach only servers they start on loopback (the scripted Messages-API server,
MCP fixture servers, language servers over stdio). :mod:`tests.netguard.sitecustomize` refuses
any other connection, in this process and in every Python subprocess that inherits the
environment, and the autouse fixture below fails the test during which one was attempted —
even when the code under test swallowed the refusal.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.model.background import BACKGROUND_ENV
from lsp_agent.store.paths import DATA_DIR_ENV
from tests.netguard import sitecustomize as netguard

NETGUARD_DIR = Path(netguard.__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    """Install the guard here and hand it to subprocesses through the environment."""
    if not os.environ.get(netguard.LOG_VARIABLE):
        log = Path(tempfile.gettempdir()) / f"lsp-agent-netguard-{os.getpid()}.log"
        os.environ[netguard.LOG_VARIABLE] = str(log)
        config.add_cleanup(lambda: log.unlink(missing_ok=True))
    log = Path(os.environ[netguard.LOG_VARIABLE])
    log.touch()
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(NETGUARD_DIR), path]))
    netguard.install(str(log))
    # Background model requests (summary ahead of time, titles) are off unless a test
    # scripts them: the other suites' scripts then never see them.
    os.environ[BACKGROUND_ENV] = "0"
    # OAuth credentials never reach the user's keyring: no backend, unless a test selects
    # its own (tests/keyrings) in a subprocess.
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    # Session transcripts go to a folder of this run, never the user's data folder (the
    # variable reaches every server and CLI the tests start).
    if not os.environ.get(DATA_DIR_ENV):
        data = Path(tempfile.mkdtemp(prefix="lsp-agent-data-"))
        os.environ[DATA_DIR_ENV] = str(data)
        config.add_cleanup(lambda: shutil.rmtree(data, ignore_errors=True))


@pytest.fixture(autouse=True)
def loopback_only() -> Iterator[None]:
    """Fail the test if it (or a subprocess it started) tried a non-loopback connection."""
    log = Path(os.environ[netguard.LOG_VARIABLE])
    start = log.stat().st_size
    yield
    with log.open(encoding="utf-8") as f:
        f.seek(start)
        attempts = f.read()
    if attempts:
        pytest.fail("a connection to a non-loopback address was attempted:\n" + attempts)
