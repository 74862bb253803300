"""permissions package."""
