"""initializationOptions parsing: unknown keys are tolerated, bad values are not."""

from __future__ import annotations

import logging
import subprocess
import sys
from typing import Any, get_args

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from lsp_agent.lsp.logs import LEVELS
from lsp_agent.lsp.options import (
    LOG_LEVEL_NAMES,
    PERMISSION_MODES,
    LogLevelName,
    parse_init_options,
    read_strict,
)
from lsp_agent.lsp.options_schema import validate


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


# ---- the strict reader (no pydantic before `initialize` is answered) and the full schema ----

VALID = [
    {},
    {"trusted": True, "permissionMode": "acceptEdits", "logLevel": "info"},
    {
        "clientName": "vscode",
        "clientVersion": None,
        "model": "claude-x",
        "permissionMode": None,
        "clientCapabilities": {"saveDocuments": True, "reloadDocuments": False},
        "trusted": False,
        "settings": {"permissions": {"allow": ["Bash(npm test:*)"]}},
        "logLevel": "debug",
        "permissionTimeoutMs": 1000,
        "editConfirmTimeoutMs": 7,
        "diagnostics": {"verify": {"mode": "fix"}},
        "verificationMode": "report",  # unknown: kept in extra and logged
    },
]


@pytest.mark.parametrize("ours", VALID)
def test_the_strict_reader_agrees_with_the_schema(ours: dict[str, Any]) -> None:
    strict = read_strict(ours)
    assert strict is not None
    assert strict == validate(ours)


@pytest.mark.parametrize(
    "ours",
    [
        {"permission_mode": "plan"},  # a Python field name
        {"permissionTimeoutMs": "5000"},  # pydantic coerces it
        {"trusted": 1},
        {"clientCapabilities": {"saveDocuments": True, "extra": True}},
        {"permissionMode": "yolo"},
        {"model": ""},
        {"logLevel": None},
    ],
)
def test_anything_unusual_goes_to_the_schema(ours: dict[str, Any]) -> None:
    assert read_strict(ours) is None


def test_coerced_values_and_python_names_are_read_by_the_schema() -> None:
    options = parse_init_options(
        {"lspAgent": {"permissionTimeoutMs": "5000", "permission_mode": "plan"}}
    )
    assert options.permission_timeout_ms == 5000
    assert options.permission_mode == "plan"


@pytest.mark.parametrize(
    ("ours", "field"),
    [
        ({"trusted": "maybe"}, "trusted"),
        ({"clientCapabilities": {"saveDocuments": True, "bogus": 1}}, "clientCapabilities.bogus"),
        ({"permissionTimeoutMs": 0}, "permissionTimeoutMs"),
        ({"model": ""}, "model"),
    ],
)
def test_bad_values_name_the_field(ours: dict[str, Any], field: str) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=f"initializationOptions.lspAgent: {field}"):
        parse_init_options({"lspAgent": ours})


def test_the_declared_values_match_the_core() -> None:
    from lsp_agent.protocol.permissions import PermissionMode

    assert get_args(PermissionMode) == PERMISSION_MODES
    assert LOG_LEVEL_NAMES == get_args(LogLevelName) == tuple(LEVELS)


def test_parsing_the_options_does_not_load_pydantic() -> None:
    """Editors' usual options are read without pydantic (it is on the path to the initialize
    answer); checked in a fresh interpreter."""
    code = (
        "import sys\n"
        "from lsp_agent.lsp.options import parse_init_options\n"
        "options = parse_init_options({'lspAgent': {'trusted': True, 'logLevel': 'info',\n"
        "    'permissionMode': 'default', 'model': 'm',\n"
        "    'clientCapabilities': {'saveDocuments': True, 'reloadDocuments': True}}})\n"
        "assert options.trusted and options.client_capabilities.save_documents\n"
        "sys.exit(3 if any(m.split('.')[0] == 'pydantic' for m in sys.modules) else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("value", ["yes", 1, "true"])
def test_trust_is_a_strict_boolean(value: object) -> None:
    with pytest.raises(JsonRpcInvalidParams, match="trusted"):
        parse_init_options({"lspAgent": {"trusted": value}})


def test_max_model_requests_caps_a_prompt_and_must_be_positive() -> None:
    options = parse_init_options({"lspAgent": {"maxModelRequests": 5}})
    assert options.max_model_requests == 5
    assert parse_init_options({"lspAgent": {}}).max_model_requests is None
    for bad in (0, -1, "many"):
        with pytest.raises(JsonRpcInvalidParams, match="maxModelRequests"):
            parse_init_options({"lspAgent": {"maxModelRequests": bad}})


def test_mcp_servers_are_an_object_or_absent() -> None:
    servers = {"ed": {"command": "srv", "args": ["--x"]}}
    assert parse_init_options({"lspAgent": {"mcpServers": servers}}).mcp_servers == servers
    assert parse_init_options({"lspAgent": {}}).mcp_servers is None
    with pytest.raises(JsonRpcInvalidParams, match="mcpServers"):
        parse_init_options({"lspAgent": {"mcpServers": ["ed"]}})
