"""Tool names and input schemas as the Messages API accepts them.

Names: ``mcp__<server>__<tool>`` (Claude Code's convention, which permission rules use), each
part reduced to ``[A-Za-z0-9_-]`` (other characters become ``_``; runs of ``_`` in the server
part collapse so ``__`` only separates parts), at most 64 characters (the API's limit on tool
names; a longer name keeps its start and gets a short hash of the original). Names that would
collide are disambiguated with a hash suffix, deterministically.

Schemas: the API wants an object schema at the top level and rejects ``oneOf``/``anyOf``/
``allOf`` there; those are folded into one object (properties merged, only the properties
every branch requires stay required) and other top-level keywords the API does not take are
dropped, each change logged.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

log = logging.getLogger(__name__)

MAX_TOOL_NAME = 64
"""Longest tool name the Messages API accepts (characters)."""

PREFIX = "mcp__"

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_UNDERSCORES = re.compile(r"_{2,}")
_COMBINATORS = ("oneOf", "anyOf", "allOf")
_TOP_LEVEL_KEEP = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "description",
        "$defs",
        "definitions",
        "title",
    }
)


def server_part(name: str) -> str:
    """The server's name as used in tool names and permission rules (``mcp__<this>``)."""
    cleaned = _UNDERSCORES.sub("_", _UNSAFE.sub("_", name)).strip("_")
    return cleaned or "server"


def _hash(text: str, n: int = 8) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]


def _fit(name: str, original: str) -> str:
    if len(name) <= MAX_TOOL_NAME:
        return name
    suffix = "_" + _hash(original)
    return name[: MAX_TOOL_NAME - len(suffix)] + suffix


def tool_names(server: str, tools: Iterable[str]) -> dict[str, str]:
    """Map each tool name of ``server`` to its model-facing name (see the module docstring).

    Deterministic: the same inputs give the same names whatever their order.
    """
    base = PREFIX + server_part(server) + "__"
    out: dict[str, str] = {}
    taken: set[str] = set()
    for original in sorted(set(tools)):
        candidate = _fit(base + (_UNSAFE.sub("_", original) or "tool"), original)
        if candidate in taken:
            suffix = "_" + _hash(original)
            candidate = _fit(base + _UNSAFE.sub("_", original), original)
            candidate = candidate[: MAX_TOOL_NAME - len(suffix)] + suffix
        taken.add(candidate)
        out[original] = candidate
    return out


def normalize_schema(schema: Any, *, where: str) -> dict[str, Any]:
    """An input schema the API accepts, from whatever the server declared.

    ``where`` names the tool in log lines. Never raises; a schema that is not an object
    becomes ``{"type": "object"}``.
    """
    if not isinstance(schema, Mapping):
        log.warning("MCP tool %s: input schema is not an object; using an empty object", where)
        return {"type": "object", "properties": {}}
    out: dict[str, Any] = dict(schema)
    branches = [b for k in _COMBINATORS for b in _as_list(out.pop(k, None))]
    if branches:
        log.info("MCP tool %s: top-level oneOf/anyOf/allOf folded into one object", where)
        properties: dict[str, Any] = dict(out.get("properties") or {})
        required_sets: list[set[str]] = []
        for branch in branches:
            if isinstance(branch, Mapping):
                for key, value in (branch.get("properties") or {}).items():
                    properties.setdefault(key, value)
                required_sets.append(
                    {r for r in branch.get("required") or () if isinstance(r, str)}
                )
        required = set(r for r in out.get("required") or () if isinstance(r, str))
        if required_sets:
            required |= set.intersection(*required_sets)
        out["properties"] = properties
        if required:
            out["required"] = sorted(required)
        else:
            out.pop("required", None)
    if out.get("type") != "object":
        if "type" in out:
            log.info("MCP tool %s: top-level type %r replaced by object", where, out["type"])
        out["type"] = "object"
    dropped = [k for k in out if k not in _TOP_LEVEL_KEEP]
    for key in dropped:
        del out[key]
    if dropped:
        log.info("MCP tool %s: schema keywords dropped: %s", where, ", ".join(sorted(dropped)))
    out.pop("title", None)
    if not isinstance(out.get("properties", {}), Mapping):
        out["properties"] = {}
    return out


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []
