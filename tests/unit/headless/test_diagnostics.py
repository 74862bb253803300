"""``lsp-agent run --diagnostics FILE``: reading the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_agent.headless.diagnostics import DiagnosticsFileError, load_diagnostics_file


def test_a_valid_file_gives_the_settings(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(
        json.dumps(
            {
                "verify": {"mode": "fix"},
                "servers": [{"name": "ruff", "command": ["ruff", "server"], "filetypes": ["*.py"]}],
            }
        )
    )
    settings = load_diagnostics_file(path)
    assert settings.verify.mode == "fix"
    assert [s.name for s in settings.servers] == ["ruff"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON: Expecting property name enclosed in double quotes (line 1"),
        ("[]", "must hold a JSON object"),
        ('{"verify": {"mode": "always"}}', "diagnostics.verify.mode: Input should be"),
        ('{"servers": [{"name": "x"}]}', "diagnostics.servers.0.command: Field required"),
        ('{"verfy": {}}', "diagnostics.verfy: Extra inputs are not permitted"),
    ],
)
def test_problems_name_the_file_and_the_field(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "d.json"
    path.write_text(content)
    with pytest.raises(DiagnosticsFileError) as caught:
        load_diagnostics_file(path)
    assert str(caught.value).startswith(f"--diagnostics {path}: ")
    assert message in str(caught.value)


def test_an_unreadable_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(DiagnosticsFileError, match="cannot read it"):
        load_diagnostics_file(tmp_path / "missing.json")
