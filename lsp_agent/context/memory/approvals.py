"""The user's answer, per project, about imports that leave the workspace from a project file.

Claude Code asks once per project and remembers the answer; we keep it in a small JSON file
of our own (``{"/abs/project": "approved" | "declined"}``) so Claude Code's files are never
rewritten. Writes are atomic (temp file + rename); a broken file counts as "no answers yet".
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import cast

from lsp_agent.context.memory.loader import ExternalImports

log = logging.getLogger(__name__)

FILE_NAME = "memory-external-imports.json"


def default_approvals_path() -> Path:
    """``<user state dir>/lsp-agent/memory-external-imports.json`` (platformdirs)."""
    import platformdirs

    return platformdirs.user_state_path("lsp-agent") / FILE_NAME


class ImportApprovals:
    """Remembered answers; ``path`` ``None`` keeps them for this process only."""

    def __init__(self, *, path: Path | None) -> None:
        self.path = path
        self._memory: dict[str, str] = {}

    def get(self, project: Path) -> ExternalImports:
        """The answer for ``project`` (``"ask"`` until the user gave one)."""
        value = self._read().get(str(project), "ask")
        return cast(ExternalImports, value) if value in ("approved", "declined") else "ask"

    def set(self, project: Path, answer: ExternalImports) -> None:
        """Remember ``answer`` for ``project``. Raises ``OSError`` if the file cannot be
        written (the answer then still holds for this process)."""
        data = self._read()
        if answer == "ask":
            data.pop(str(project), None)
        else:
            data[str(project)] = answer
        self._memory = dict(data)
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".approvals-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _read(self) -> dict[str, str]:
        if self.path is None:
            return dict(self._memory)
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return dict(self._memory)
        except (OSError, ValueError, RecursionError) as exc:
            log.warning("ignoring %s: %s", self.path, exc)
            return dict(self._memory)
        if not isinstance(raw, dict):
            return dict(self._memory)
        return {str(k): v for k, v in raw.items() if isinstance(v, str)}
