"""The permission engine: Claude Code's rule grammar, the decision order (deny beats ask
beats allow; modes; the path sandbox), read-only analysis of shell commands (tree-sitter-bash)
and the suggestions an "always" answer saves.

Layering: may import only ``protocol``; ``config``, ``workspace`` and everything above may
import it. It decides; it never asks anyone (the executor asks the door's host).
"""
