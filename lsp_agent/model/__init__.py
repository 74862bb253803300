"""model package."""
