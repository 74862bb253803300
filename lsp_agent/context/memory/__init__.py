"""Project memory: the CLAUDE.md / AGENTS.md hierarchy, rules, imports and auto memory.

:func:`~lsp_agent.context.memory.loader.load_memory` finds and reads the memory files of a
session in Claude Code's order (docs/memory.md);
:class:`~lsp_agent.context.memory.store.MemoryStore` keeps one session's memory current (trust,
editor buffers, files touched by tools).
"""
