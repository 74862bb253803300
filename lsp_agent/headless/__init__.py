"""The headless door: ``lsp-agent run -p`` runs one prompt against the disk and prints the
result as text, one JSON object, or a stream of JSON events (Claude Code's ``-p`` formats)."""
