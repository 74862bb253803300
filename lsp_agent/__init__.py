"""lsp-agent: a coding agent that lives inside a language server.

Importing this package has no side effects and imports nothing heavy (no pygls, no anthropic),
so ``lsp-agent --version`` stays fast.
"""

__version__ = "0.1.0"
