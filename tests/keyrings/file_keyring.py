"""A real ``keyring`` backend for the tests: a ``KeyringBackend`` subclass that keeps its
items in the JSON file named by ``LSP_AGENT_TEST_KEYRING`` (never the user's keyring).
Selected in a process with ``PYTHON_KEYRING_BACKEND=tests.keyrings.file_keyring.FileKeyring``,
so the code under test goes through ``keyring.get_keyring()`` and the backend API as it does
with the system keyring."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

FILE_ENV = "LSP_AGENT_TEST_KEYRING"
BACKEND = "tests.keyrings.file_keyring.FileKeyring"


class FileKeyring(KeyringBackend):
    """Items as ``{"<service>\\n<user>": "<password>"}`` in one JSON file."""

    priority = 1  # type: ignore[assignment]

    @property
    def path(self) -> Path:
        return Path(os.environ[FILE_ENV])

    def _items(self) -> dict[str, str]:
        try:
            return dict(json.loads(self.path.read_text("utf-8")))
        except FileNotFoundError:
            return {}

    def _save(self, items: dict[str, str]) -> None:
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(items), "utf-8")
        partial.replace(self.path)  # a reader never sees half a file

    def get_password(self, service: str, username: str) -> str | None:
        return self._items().get(f"{service}\n{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        items = self._items()
        items[f"{service}\n{username}"] = password
        self._save(items)

    def delete_password(self, service: str, username: str) -> None:
        items = self._items()
        if items.pop(f"{service}\n{username}", None) is None:
            raise PasswordDeleteError("no such item")
        self._save(items)


def items(path: Path) -> dict[str, str]:
    """The items of the keyring file ``path`` (``{}`` when it was never written)."""
    return dict(json.loads(path.read_text("utf-8"))) if path.exists() else {}
