"""Claude Code compatible hooks: configuration lives in settings; :mod:`.runner` runs them
(command hooks, JSON in and out, process-group timeouts).

Layering: may import ``config``, ``workspace``, ``permissions``, ``model`` and ``protocol``;
never the tools, the agent, the sessions or a door.
"""
