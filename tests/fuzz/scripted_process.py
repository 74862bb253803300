"""The scripted Messages-API server as a separate process (``python -m lsp_agent.testing``), for
tests whose client blocks (the raw wire client) and so cannot share an event loop with it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from lsp_agent.testing.scenario import Scenario

START_S = 30.0
"""Bound on the scripted server's start-up (s)."""


class ScriptedProcess:
    """``with ScriptedProcess(scenario, dir) as model: ... model.base_url``."""

    def __init__(self, scenario: Scenario, directory: Path) -> None:
        self.directory = directory
        self.scenario_file = directory / "scenario.json"
        self.scenario_file.write_text(
            json.dumps(scenario.model_dump(mode="json", exclude_none=True))
        )
        self.port_file = directory / "port"
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lsp_agent.testing",
                "--scenario",
                str(self.scenario_file),
                "--port",
                "0",
                "--port-file",
                str(self.port_file),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + START_S
        while not self.port_file.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the scripted server did not start: {self.stop()}")
            time.sleep(0.05)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port_file.read_text().strip()}"

    def stop(self) -> str:
        """Stop it; returns its stderr (the summary of what it served)."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.terminate()
        _out, err = self.proc.communicate(timeout=30)
        return err.decode(errors="replace")

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
