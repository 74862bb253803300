"""The offline demo (``lsp-agent demo``): a bundled project, a scripted model and an LSP client
that drives the real server as an editor would, plus the same scenario through ``run -p``.

Layering: just below ``cli``; may import the doors and everything below them.
"""
