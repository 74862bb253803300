"""The tools the model calls: the ``Tool`` base with its fail-closed flags and the
``prepare``/``call`` steps, the ``ToolContext`` every call gets, one module per tool (Claude
Code's names and input shapes) and the registry.

Layering: may import ``context``, ``diagnostics``, ``hooks``, ``config``, ``workspace``,
``permissions``, ``model`` and ``protocol``; never ``agent``, ``sessions`` or a door. A tool
changes files only through its context's workspace.
"""
