"""The headless door: ``lsp-agent run -p`` runs one prompt against the disk and prints the
result as text, one JSON object, or a stream of JSON events (Claude Code's ``-p`` formats).

Layering: a door; builds its sessions with the composition root
(:func:`lsp_agent.sessions.compose.build_sessions`) and may import the whole core, never the
LSP door or pygls.
"""
