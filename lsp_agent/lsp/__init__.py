"""The LSP door: a pygls language server that embeds the agent (docs/protocol.md).

Modules on the path to the ``initialize`` answer (kept light: no agent core, no pydantic):
``server`` (features, entry points, components created on first use), ``protocol`` (raw
envelopes, response guards), ``options`` (``initializationOptions``), ``methods`` (method names
and the static capabilities), ``warmup`` (the background import after ``initialized``),
``logs`` and ``errors``.

Loaded after start-up: ``host`` (the core's Host against an editor), ``sessions_door`` (the
``lspAgent/session/*`` handlers), ``code_actions``, ``diagnostics_door``, ``settings_door``,
``documents`` (open buffers and disk state), ``textedit`` (minimal TextEdits in the negotiated
encoding), ``params``/``options_schema``/``prompt`` (payload validation) and ``progress``.

Layering: a door; builds its sessions with the composition root
(:func:`lsp_agent.sessions.compose.build_sessions`) and may import the whole core, never the
headless door.
"""
