"""The golden transcripts still match: ``run -p`` and the LSP door behave as recorded.

A failure shows the unified diff between the recorded transcript and today's. If the change
is intended, re-record (``python -m tests.golden.record``) and commit the new files with the
change that explains them; if it is noise (a new random id, a timestamp), normalise it in
``tests/golden/normalise.py`` instead.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

import pytest

from tests.golden.cli_cases import CASES as CLI_CASES
from tests.golden.cli_cases import CliCase
from tests.golden.cli_cases import run_case as run_cli_case
from tests.golden.lsp_cases import CASES as LSP_CASES
from tests.golden.lsp_cases import LspCase
from tests.golden.lsp_cases import run_case as run_lsp_case
from tests.golden.normalise import dump

GOLDEN = Path(__file__).parent
RECORD = "LSP_AGENT_RECORD_GOLDEN"
"""Set to 1 (``python -m tests.golden.record`` does) to write the transcripts instead."""


def _check(path: Path, transcript: Any) -> None:
    actual = dump(transcript)
    if os.environ.get(RECORD) == "1":
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"no golden transcript {path.name}: record it (tests/golden/record.py)"
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True),
            actual.splitlines(keepends=True),
            fromfile=f"golden/{path.parent.name}/{path.name}",
            tofile="this run",
        )
        pytest.fail("behaviour changed:\n" + "".join(diff), pytrace=False)


@pytest.mark.parametrize("case", CLI_CASES, ids=[c.name for c in CLI_CASES])
def test_run_p_transcript(case: CliCase, tmp_path: Path) -> None:
    _check(GOLDEN / "cli" / f"{case.name}.json", run_cli_case(case, tmp_path))


@pytest.mark.parametrize("case", LSP_CASES, ids=[c.name for c in LSP_CASES])
async def test_lsp_message_log(case: LspCase, tmp_path: Path) -> None:
    _check(GOLDEN / "lsp" / f"{case.name}.json", await run_lsp_case(case, tmp_path))


def test_every_golden_file_has_a_case() -> None:
    """A golden file whose case was removed would otherwise go stale unnoticed."""
    names = {f"cli/{c.name}.json" for c in CLI_CASES} | {f"lsp/{c.name}.json" for c in LSP_CASES}
    on_disk = {p.relative_to(GOLDEN).as_posix() for p in GOLDEN.glob("*/*.json")}
    assert on_disk == names
