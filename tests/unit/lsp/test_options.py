"""initializationOptions parsing: unknown keys are tolerated, bad values are not."""

from __future__ import annotations

import logging

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from lsp_agent.lsp.options import parse_init_options


def test_unknown_keys_from_newer_clients_are_logged_not_fatal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        options = parse_init_options(
            {"lspAgent": {"clientName": "vscode", "verificationMode": "report", "futureKey": 1}}
        )
    assert options.client_name == "vscode"
    assert "futureKey" in caplog.text


def test_bad_values_of_known_keys_fail_with_the_field_named() -> None:
    with pytest.raises(JsonRpcInvalidParams, match="permissionMode"):
        parse_init_options({"lspAgent": {"permissionMode": "yolo"}})


def test_missing_or_foreign_options_give_defaults() -> None:
    assert parse_init_options(None).trusted is False
    assert parse_init_options({"other": {}}).permission_mode is None
