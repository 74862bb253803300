"""The scripted Messages-API server is tested the way the model layer uses it: through the
real SDK client, with the model layer's fixtures."""

from __future__ import annotations

from tests.unit.model.conftest import make_model, serve

__all__ = ["make_model", "serve"]
