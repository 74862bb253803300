"""Claude Code compatible hooks: configuration lives in settings; :mod:`.runner` runs them."""
