"""Writing "always" permission rules into a settings file, atomically.

The file keeps every key it had (only ``permissions.allow``/``deny`` grow); it is rewritten as
2-space-indented JSON through a temporary file in the same folder and a rename, so a crash
leaves either the old or the new file. A file that is not a JSON object is never overwritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from lsp_agent.permissions.rules import RuleBehavior


def add_permission_rules(path: Path, *, behavior: RuleBehavior, rules: Sequence[str]) -> bool:
    """Append ``rules`` (skipping ones already there) to ``permissions.<behavior>`` of
    ``path``, creating the file and its folder if needed. Returns whether the file changed.

    Raises ``ValueError`` when the file exists but is not a JSON object (or its
    ``permissions``/list is the wrong type) and ``OSError`` when it cannot be written.
    """
    data: dict[str, object] = {}
    if path.exists():
        text = path.read_text(encoding="utf-8-sig")
        if text.strip():
            try:
                loaded = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path} is not valid JSON ({exc}); not changing it") from None
            except RecursionError:
                raise ValueError(f"{path} is nested too deeply; not changing it") from None
            if not isinstance(loaded, dict):
                raise ValueError(f"{path} is not a JSON object; not changing it")
            data = loaded
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise ValueError(f"permissions in {path} is not an object; not changing it")
    current = permissions.setdefault(behavior, [])
    if not isinstance(current, list):
        raise ValueError(f"permissions.{behavior} in {path} is not a list; not changing it")
    added = [rule for rule in rules if rule not in current]
    if not added:
        return False
    current.extend(added)
    _write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return True


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode: int | None = None
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode if mode is not None else 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
