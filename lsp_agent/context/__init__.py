"""The context engine: token accounting, tool-result budgets, clearing old tool results,
compaction, the ``/context`` report and the slash-command registry.

Pure, typed functions over :mod:`lsp_agent.model.types`; the agent loop and the sessions call
them. Layering: below ``agent`` and ``sessions``, above ``model``.
"""
