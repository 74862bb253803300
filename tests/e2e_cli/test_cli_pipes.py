"""A listing piped into a reader that stops early (``lsp-agent ps | head -2``) ends quietly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import RUN_TIMEOUT_S


@pytest.mark.parametrize("command", [["ps"], ["ps", "--json"]])
def test_a_reader_that_went_away_ends_the_command_without_a_traceback(
    tmp_path: Path, command: list[str]
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", *command],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the command writes its first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=RUN_TIMEOUT_S) == 141  # 128 + SIGPIPE, as a shell reports it
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
