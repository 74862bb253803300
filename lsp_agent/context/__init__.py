"""The context engine: token accounting, tool-result budgets, clearing old tool results,
compaction, the ``/context`` report and the slash-command registry; project memory in
:mod:`lsp_agent.context.memory`.

Pure, typed functions over :mod:`lsp_agent.model.types`; the agent loop and the sessions call
them. Layering: below ``agent`` and ``sessions``, above ``model``.
"""
