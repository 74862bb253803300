"""End-to-end harness for diagnostics: the door's harness (real server subprocess, pytest-lsp
client acting as the editor, scripted model) plus managed-server settings and helpers for the
bridge, code actions and the session start/end notifications."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

import tests.e2e.conftest as door_harness
from lsp_agent.lsp import methods
from lsp_agent.lsp.protocol import RawResponse
from tests.e2e.conftest import VSCODE_ONLY, WAIT_S, Editor, Launch, launch, preset

__all__ = ["VSCODE_ONLY", "WAIT_S", "Editor", "Launch", "launch", "preset"]

CHECKER = Path(__file__).resolve().parent / "checker_server.py"

_RAW_RESULTS = {types.TEXT_DOCUMENT_CODE_ACTION, types.CODE_ACTION_RESOLVE}


class DiagnosticsClientProtocol(door_harness.AgentClientProtocol):
    """The door harness' client protocol, with code-action answers kept as plain JSON:
    lsprotocol decodes any ``CodeAction`` that carries a ``command`` as a ``Command`` (its
    union hook only checks for the key), which would garble what the server sent."""

    def get_result_type(self, method: str) -> Any:  # type: ignore[override]
        if method in _RAW_RESULTS:
            return RawResponse
        return super().get_result_type(method)


def _make_client() -> LanguageClient:
    client = LanguageClient(
        protocol_cls=DiagnosticsClientProtocol, converter_factory=default_converter
    )
    register_lsp_features(client)
    return client


@pytest.fixture(autouse=True)
def _plain_code_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(door_harness, "make_client", _make_client)


def ruff_server() -> dict[str, Any]:
    """Settings of a managed ``ruff server`` (from the test environment)."""
    beside = Path(sys.executable).with_name("ruff")
    command = str(beside) if beside.exists() else shutil.which("ruff")
    assert command is not None, "ruff is a dev dependency"
    return {
        "name": "ruff",
        "command": [command, "server"],
        "filetypes": ["*.py"],
        "languageId": "python",
    }


def checker_server(*args: str) -> dict[str, Any]:
    """Settings of the test checker (``ERROR``/``WARN`` words in ``*.txt`` files)."""
    return {
        "name": "checker",
        "command": [sys.executable, str(CHECKER), *args],
        "filetypes": ["*.txt"],
    }


def diagnostics_options(**settings: Any) -> dict[str, Any]:
    """``initializationOptions.lspAgent`` with ``diagnostics`` settings."""
    return {"diagnostics": settings}


def track_sessions(editor: Editor) -> dict[str, list[dict[str, Any]]]:
    """Record ``lspAgent/session/didStart`` and ``didEnd`` notifications."""
    seen: dict[str, list[dict[str, Any]]] = {"start": [], "end": []}

    @editor.client.feature(methods.SESSION_DID_START)  # type: ignore[untyped-decorator]
    def started(params: dict[str, Any]) -> None:
        seen["start"].append(params)

    @editor.client.feature(methods.SESSION_DID_END)  # type: ignore[untyped-decorator]
    def ended(params: dict[str, Any]) -> None:
        seen["end"].append(params)

    return seen


def verdicts(editor: Editor) -> list[dict[str, Any]]:
    """The structured verification verdicts the server sent, in order."""
    return [
        u["update"]["rawOutput"]["verification"]
        for u in editor.updates
        if u["update"].get("sessionUpdate") == "tool_call_update"
        and "verification" in (u["update"].get("rawOutput") or {})
    ]


def bridge(editor: Editor, path: Path, version: int, *diagnostics: dict[str, Any]) -> None:
    """Send ``lspAgent/diagnostics/didChange`` like the VS Code or Neovim shim does."""
    editor.client.protocol.notify(
        methods.DIAGNOSTICS_DID_CHANGE,
        {"uri": path.as_uri(), "version": version, "diagnostics": list(diagnostics)},
    )


def lsp_diagnostic(
    line: int, start: int, end: int, message: str, *, source: str, code: str, severity: int = 1
) -> dict[str, Any]:
    return {
        "range": {
            "start": {"line": line, "character": start},
            "end": {"line": line, "character": end},
        },
        "message": message,
        "source": source,
        "code": code,
        "severity": severity,
    }


async def until(condition: Callable[[], bool]) -> None:
    """Wait (bounded by the harness' per-wait cap) until ``condition()`` holds."""
    async with asyncio.timeout(WAIT_S):
        while not condition():
            await asyncio.sleep(0.01)
