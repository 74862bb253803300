"""What the agent's client side says to a managed language server: the ``initialize`` params
and the answers to the server's own requests (LSP 3.17: ``workspace/configuration``,
``workspace/workspaceFolders``, ``workspace/applyEdit``, registrations, progress, refreshes)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsp_agent.diagnostics.jsonrpc import MethodNotFoundError
from lsp_agent.diagnostics.uris import path_to_uri


def initialize_params(roots: Sequence[Path], initialization_options: Any) -> dict[str, Any]:
    """The ``initialize`` request's params: this process, the roots as workspace folders, the
    client capabilities the managed-server client implements (LSP 3.17), and the configured
    ``initializationOptions`` when there are any."""
    folders = [{"uri": path_to_uri(root), "name": root.name or str(root)} for root in roots]
    params: dict[str, Any] = {
        "processId": os.getpid(),
        "clientInfo": {"name": "lsp-agent"},
        "rootUri": folders[0]["uri"] if folders else None,
        "workspaceFolders": folders or None,
        "capabilities": {
            "general": {"positionEncodings": ["utf-32", "utf-16", "utf-8"]},
            "workspace": {"configuration": True, "workspaceFolders": True},
            "textDocument": {
                "synchronization": {"dynamicRegistration": False, "didSave": False},
                "publishDiagnostics": {"versionSupport": True, "relatedInformation": False},
                "diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": False},
                "definition": {"linkSupport": False},
                "references": {},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
                "rename": {"prepareSupport": True},
            },
        },
    }
    if initialization_options is not None:
        params["initializationOptions"] = initialization_options
    return params


def answer_server_request(method: str, params: Any, *, settings: Any, roots: Sequence[Path]) -> Any:
    """The client's answer to a request from the server: ``workspace/configuration`` from
    ``settings`` (by dotted section), ``workspace/workspaceFolders`` from ``roots``; edits are
    refused (the agent applies edits itself); registrations, progress and refreshes get ``null``.

    Raises :class:`MethodNotFoundError` for any other method.
    """
    if method == "workspace/configuration":
        items = params.get("items") if isinstance(params, dict) else None
        if not isinstance(items, list):
            return []
        return [
            _section(settings, item.get("section") if isinstance(item, dict) else None)
            for item in items
        ]
    if method == "workspace/workspaceFolders":
        return [{"uri": path_to_uri(r), "name": r.name or str(r)} for r in roots]
    if method == "workspace/applyEdit":
        return {"applied": False, "failureReason": "lsp-agent applies edits itself"}
    if method in (
        "client/registerCapability",
        "client/unregisterCapability",
        "window/workDoneProgress/create",
        "window/showMessageRequest",
    ) or method.endswith("/refresh"):
        return None
    raise MethodNotFoundError(method)


def _section(settings: Any, section: Any) -> Any:
    """``settings`` looked up by a dotted ``section`` (``None`` when absent)."""
    if section is None or section == "":
        return settings
    value = settings
    for part in str(section).split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value
