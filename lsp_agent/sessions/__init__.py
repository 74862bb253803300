"""sessions package."""
