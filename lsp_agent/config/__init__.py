"""Settings: Claude Code's settings files (managed, user, project, local, ``--settings``),
layered loading with exact positions of every problem, persistence of "always" rules and the
problems as LSP-shaped diagnostics data.

Layering: may import ``permissions`` (rule grammar, policy), ``model`` and ``protocol``; never
``workspace`` (a sibling layer), anything above, or a door.
"""
