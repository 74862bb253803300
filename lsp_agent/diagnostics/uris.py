"""``file:`` URIs ↔ absolute paths, without pygls (the core may not import it)."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit


def path_to_uri(path: Path) -> str:
    """The ``file:`` URI of an absolute path (percent-encoded as RFC 8089 requires)."""
    return path.as_uri()


def uri_to_path(uri: str) -> Path | None:
    """The absolute path of a ``file:`` URI, ``None`` for any other scheme or a relative or
    malformed one."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    if parts.scheme != "file":
        return None
    raw = unquote(parts.path)
    if os.name == "nt" and len(raw) >= 3 and raw[0] == "/" and raw[2] == ":":
        raw = raw[1:]
    if parts.netloc and parts.netloc != "localhost":
        raw = f"//{parts.netloc}{raw}"
    path = Path(raw)
    return path if path.is_absolute() else None
