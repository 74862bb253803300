"""The LSP door: a pygls language server that embeds the agent (docs/protocol.md).

Modules: ``server`` (features, entry points), ``protocol`` (raw envelopes, response guards),
``host`` (the core's Host against an editor), ``documents`` (open buffers and disk state),
``textedit`` (minimal TextEdits in the negotiated encoding), ``params``/``options``/``prompt``
(payload validation), ``progress``, ``logs``, ``methods`` and ``errors``.
"""
