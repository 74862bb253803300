"""Settings validation: defaults, camelCase, errors that name the field."""

from __future__ import annotations

import pytest

from lsp_agent.diagnostics.config import SettingsError, parse_settings


def test_defaults_and_camel_case() -> None:
    assert parse_settings(None).verify.timeout_ms == 3000
    settings = parse_settings(
        {
            "verify": {
                "mode": "fix",
                "timeoutMs": 500,
                "sources": {"Ruff": {"ignoreCodes": ["E501"]}},
            },
            "servers": [{"name": "ruff", "command": ["ruff", "server"], "filetypes": ["*.py"]}],
        }
    )
    assert settings.verify.mode == "fix" and settings.verify.timeout_ms == 500
    assert settings.verify.filter_for("ruff", "Ruff") is not None
    assert settings.servers[0].start_timeout_ms == 10_000


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"verify": {"mode": "always"}}, "diagnostics.verify.mode"),
        ({"verify": {"timeoutMs": -1}}, "diagnostics.verify.timeoutMs"),
        (
            {"servers": [{"name": "x", "command": [], "filetypes": ["*"]}]},
            "diagnostics.servers.0.command",
        ),
        ({"servers": [{"name": "editor", "command": ["a"], "filetypes": ["*"]}]}, "reserved"),
        (
            {"servers": [{"name": "a", "command": ["a"], "filetypes": ["*"]}] * 2},
            "duplicate server names: a",
        ),
        ({"verfy": {}}, "diagnostics.verfy"),
    ],
)
def test_bad_settings_name_the_field(raw: object, message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        parse_settings(raw)
