"""``@server:uri`` mentions of MCP resources in a prompt (Claude Code's syntax).

``Summarise @docs:file:///guide.md and @db:postgres://main/users`` names two resources: the
server (``docs``, ``db``: letters, digits, ``_``, ``-``, ``.``) and the resource URI (the rest
up to white space; a trailing ``.``, ``,``, ``;``, ``:``, ``!``, ``?``, closing bracket or
quote is sentence punctuation, not part of the URI). Only names of configured servers count,
so an address such as ``@home:8080`` in prose stays text. The session reads the mentioned
resources before the turn and appends their contents to the prompt as ``<mcp-resource>``
blocks (:func:`resource_block`).

Pure functions; no SDK import.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

_MENTION = re.compile(r"(?:(?<=\s)|\A)@([A-Za-z0-9_.-]+):(\S+)")
_TRAILING = ".,;:!?)]}'\""

MAX_MENTIONS = 10
"""Resources read for one prompt at most (the rest stay plain text)."""


@dataclass(frozen=True, kw_only=True)
class Mention:
    """One ``@server:uri`` in a prompt."""

    server: str
    uri: str


def parse_mentions(text: str, servers: Collection[str]) -> list[Mention]:
    """The distinct resource mentions of ``text`` naming one of ``servers``, in order, at
    most :data:`MAX_MENTIONS`."""
    out: list[Mention] = []
    for match in _MENTION.finditer(text):
        server, uri = match.group(1), match.group(2).rstrip(_TRAILING)
        mention = Mention(server=server, uri=uri)
        if server in servers and ":" in uri and mention not in out:
            out.append(mention)
        if len(out) >= MAX_MENTIONS:
            break
    return out


def resource_block(mention: Mention, *, text: str | None = None, error: str | None = None) -> str:
    """The block appended to the prompt for ``mention``: its ``text``, or the ``error`` that
    kept it from being read."""
    attrs = f'server="{_attr(mention.server)}" uri="{_attr(mention.uri)}"'
    if error is not None:
        return f'<mcp-resource {attrs} error="{_attr(error)}" />'
    return f"<mcp-resource {attrs}>\n{text}\n</mcp-resource>"


def _attr(value: str) -> str:
    """``value`` inside a double-quoted attribute the model reads: only ``"`` is escaped
    (``&quot;``); other HTML entities (``&#x27;`` for an apostrophe) are noise to it."""
    return value.replace('"', "&quot;")
