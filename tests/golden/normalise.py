"""Normalisation of recorded transcripts: what differs between two runs of the same behaviour
(random ids, temporary paths, durations, the date, the package version) is replaced by stable
placeholders, so a golden file changes only when the behaviour does.

Placeholders: ``<MODEL_URL>`` (the scripted model), ``<ROOT>`` (the project folder; paths and
``file://`` URIs), ``<ROOT-SLUG>`` (its auto-memory folder name), ``<TMP>`` (the test's
temporary folder), ``<PYTHON>`` (the interpreter's folder), ``<uuid-N>`` / ``<hex-N>`` /
``<prefix-N>`` (random ids, numbered by first appearance so equal ids stay equal), ``<ms>``
(durations), ``<date>``, ``<version>``, ``<pid>``.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_HEX32 = re.compile(r"\b[0-9a-f]{32}\b")
_VERIFY_ID = re.compile(r"\bverify_([0-9a-f]{8})_")
"""The verification pseudo tool call's id: a random prefix, then a counter."""
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_DURATION_KEYS = frozenset({"duration_ms", "duration_api_ms", "elapsedMs", "durationMs"})
_VERSION_KEYS = frozenset({"lsp_agent_version"})
_PID_KEYS = frozenset({"processId"})


@dataclass
class Normaliser:
    """Replaces run-specific values in JSON-like data; keeps its id numbering across calls so
    the same id in two streams of one transcript gets the same placeholder."""

    paths: list[tuple[Path, str]]
    """(folder, placeholder), most specific first."""
    literals: dict[str, str] = field(default_factory=dict)
    """Other run-specific strings (e.g. the model endpoint's URL) and their placeholders."""
    ids: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def text(self, value: str) -> str:
        """``value`` with paths, URIs, ids and dates replaced."""
        for literal, name in self.literals.items():
            value = value.replace(literal, name)
        for folder, name in self.paths:
            for form in _forms(folder):
                value = value.replace(form, name)
        value = _UUID.sub(lambda m: self._id(m.group(0), "uuid"), value)
        value = _HEX32.sub(lambda m: self._id(m.group(0), "hex"), value)
        value = _VERIFY_ID.sub(lambda m: f"verify_{self._id(m.group(1), 'prefix')}_", value)
        return _DATE.sub("<date>", value)

    def data(self, value: Any, key: str | None = None) -> Any:
        """A normalised deep copy of JSON-like ``value`` (``key``: the key it was found under)."""
        if key in _DURATION_KEYS and isinstance(value, int | float):
            return "<ms>"
        if key in _VERSION_KEYS and isinstance(value, str):
            return "<version>"
        if key in _PID_KEYS and isinstance(value, int):
            return "<pid>"
        if isinstance(value, dict):
            return {self.text(str(k)): self.data(v, str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value

    def _id(self, raw: str, kind: str) -> str:
        if raw not in self.ids:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.ids[raw] = f"<{kind}-{self.counts[kind]}>"
        return self.ids[raw]


def _forms(folder: Path) -> Iterable[str]:
    """The spellings of ``folder`` that appear on the wire: URI (quoted, as ``Path.as_uri`` and
    as ``urllib`` quote it), JSON-escaped and plain path."""
    yield folder.as_uri()
    yield "file://" + quote(str(folder))
    yield json.dumps(str(folder))[1:-1]
    yield str(folder)


def normaliser(*, root: Path, tmp: Path, model_url: str) -> Normaliser:
    """A :class:`Normaliser` for a transcript whose project is ``root`` inside ``tmp``, with
    the scripted model at ``model_url``."""
    slug = "<ROOT-SLUG>"  # the project's auto-memory folder name (/a/b → -a-b)
    return Normaliser(
        literals={
            model_url: "<MODEL_URL>",
            re.sub(r"[^A-Za-z0-9]", "-", str(root.resolve())): slug,
            re.sub(r"[^A-Za-z0-9]", "-", str(root)): slug,
        },
        paths=[
            (root, "<ROOT>"),
            (root.resolve(), "<ROOT>"),
            (tmp, "<TMP>"),
            (tmp.resolve(), "<TMP>"),
            (Path(sys.executable).parent, "<PYTHON>"),
        ],
    )


def dump(value: Any) -> str:
    """The golden file text for ``value``: sorted keys (key order is not behaviour), one item
    per line so a diff points at what changed, non-ASCII kept readable."""
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
