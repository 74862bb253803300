"""Diagnostics: a versioned store, managed language servers and verification after edits.

The package is part of the core's world (it never imports pygls, lsprotocol or the doors):
managed language servers are driven by a small asyncio JSON-RPC client of its own
(:mod:`lsp_agent.diagnostics.jsonrpc`). docs/verification.md describes the algorithm.
Layering: may import ``hooks``, ``config``, ``workspace`` (the journal of applied changes),
``permissions``, ``model`` and ``protocol``; the tools (``LSP``, ``Rename``), the agent's
verification and the doors use it.
"""
