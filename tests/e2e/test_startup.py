"""Start-up: ``lsp-agent serve`` answers ``initialize`` without loading the agent.

The server process runs with ``python -X importtime``, which writes a line per imported module
to stderr as it happens. The client sends ``initialize``, reads the answer, then ``shutdown``
and ``exit`` without ``initialized`` (which would start the background import), so everything
on stderr is what answering ``initialize`` needed. No timings are asserted: what is loaded is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import IO, Any

import pytest

from lsp_agent.lsp import methods
from tests.e2e.conftest import REPO_ROOT

HEAVY = (
    "lsp_agent.agent",  # the loop, the executor, the pydantic event models
    "lsp_agent.sessions",
    "lsp_agent.permissions",
    "lsp_agent.tools",
    "lsp_agent.lsp.host",
    "lsp_agent.lsp.code_actions",
    "lsp_agent.lsp.diagnostics_door",
    "lsp_agent.lsp.settings_door",
    "lsp_agent.lsp.memory_door",
    "lsp_agent.context.memory",
    "anthropic",
)

EXPECTED_CAPABILITIES = {
    "positionEncoding": "utf-16",
    "textDocumentSync": {"openClose": True, "change": 2, "save": True},
    "codeActionProvider": {
        "codeActionKinds": [
            "quickfix",
            "refactor.lspAgent.explain",
            "refactor.lspAgent.ask",
            "quickfix.lspAgent.suggestion",
        ],
        "resolveProvider": True,
    },
    "executeCommandProvider": {
        "commands": [
            "lspAgent.fixWithAgent",
            "lspAgent.explainWithAgent",
            "lspAgent.askAgent",
            "lspAgent.applySuggestion",
            "lspAgent.memory.approveImports",
        ]
    },
    "hoverProvider": True,
    "completionProvider": {"triggerCharacters": ["@", "/"]},
    "codeLensProvider": {"resolveProvider": False},
    "documentLinkProvider": {"resolveProvider": False},
    "workspace": {
        "workspaceFolders": {"supported": True, "changeNotifications": True},
        "fileOperations": {},
    },
    "experimental": {
        "lspAgent": {
            "version": "0.1.0",
            "protocolVersion": methods.PROTOCOL_VERSION,
            "loadSession": True,
        }
    },
}

VSCODE_OPTIONS = {
    "lspAgent": {
        "trusted": True,
        "permissionMode": "default",
        "logLevel": "warning",
        "verificationMode": "fix",
        "clientCapabilities": {"saveDocuments": True, "reloadDocuments": True},
    }
}
"""What the VS Code extension sends (editor-clients/vscode/src/config.ts)."""


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _read(stream: IO[bytes]) -> dict[str, Any]:
    length = 0
    while True:
        line = stream.readline()
        assert line, "the server closed stdout"
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(stream.read(length))
    return message


def initialize_only(options: Any) -> tuple[dict[str, Any], set[str]]:
    """Start ``python -X importtime -m lsp_agent serve``, send ``initialize`` (with
    ``options`` as ``initializationOptions``), then ``shutdown`` and ``exit``. Returns the
    ``initialize`` answer and the modules the process imported."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "lsp_agent", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    params: dict[str, Any] = {"processId": None, "rootUri": None, "capabilities": {}}
    if options is not None:
        params["initializationOptions"] = options
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
    proc.stdin.flush()
    answer = _read(proc.stdout)
    while answer.get("id") != 1:  # window/logMessage may come first (unknown keys are logged)
        answer = _read(proc.stdout)
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.flush()
    _, stderr = proc.communicate(timeout=60)
    modules = {
        line.split("|")[-1].strip()
        for line in stderr.decode("utf-8", "replace").splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    assert "lsp_agent.lsp.server" in modules, "importtime output missing"
    return answer, modules


def _loaded(modules: set[str], prefix: str) -> list[str]:
    return sorted(m for m in modules if m == prefix or m.startswith(f"{prefix}."))


@pytest.mark.parametrize("options", [None, VSCODE_OPTIONS], ids=["no-options", "vscode-options"])
def test_initialize_is_answered_without_the_agent_or_pydantic(options: Any) -> None:
    answer, modules = initialize_only(options)
    assert answer["result"]["capabilities"] == EXPECTED_CAPABILITIES
    assert answer["result"]["serverInfo"] == {"name": "lsp-agent", "version": "0.1.0"}
    for heavy in (*HEAVY, "pydantic"):
        assert _loaded(modules, heavy) == [], heavy


def test_diagnostics_settings_are_validated_at_initialize_still_without_the_agent() -> None:
    good = {"lspAgent": {"diagnostics": {"verify": {"mode": "fix"}}}}
    answer, modules = initialize_only(good)
    assert answer["result"]["capabilities"] == EXPECTED_CAPABILITIES
    assert "lsp_agent.diagnostics.config" in modules
    for heavy in HEAVY:
        assert _loaded(modules, heavy) == [], heavy

    bad = {"lspAgent": {"diagnostics": {"verify": {"mode": "sometimes"}}}}
    answer, _ = initialize_only(bad)
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"].startswith(
        "initializationOptions.lspAgent.diagnostics.verify.mode: Input should be"
    )


def test_importing_the_server_module_loads_no_agent_code() -> None:
    code = (
        "import sys, lsp_agent.lsp.server\n"
        "bad = [m for m in sys.modules if m.startswith(('lsp_agent.agent', 'lsp_agent.sessions',"
        " 'anthropic', 'pydantic'))]\n"
        "sys.exit(str(bad) if bad else 0)\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_static_capabilities_match_the_implementations() -> None:
    from lsprotocol import types

    from lsp_agent.lsp import action_prompts as actions
    from lsp_agent.lsp import code_actions

    assert (*actions.COMMANDS, actions.COMMAND_APPLY_SUGGESTION) == methods.COMMANDS
    assert types.CodeActionKind.QuickFix.value == methods.KIND_FIX
    assert list(methods.CODE_ACTION_KINDS) == code_actions.KINDS
