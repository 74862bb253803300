"""A simulated prompt cache, for benchmarks on the scripted server (which has no real cache).

It follows the rule the Messages API documents for ``cache_control`` ("Prompt caching"): a
request writes a cache entry for the prefix ending at each of its breakpoints (tools, then
system, then messages, block by block); it reads the longest prefix that was written before
and ends at one of its breakpoints or at one of the :data:`LOOKBACK` blocks before each. What
lies between the read prefix and the last breakpoint is written (cache creation); what follows
the last breakpoint is ordinary input. Entries never expire here (the API keeps them 5 minutes
after their last use; a benchmark runs faster than that). The model name is part of the key.

Sizes are counted in bytes of canonical JSON of each block (``cache_control`` markers left
out: they are not part of the cached content); tokens are bytes / 4.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

LOOKBACK = 20
"""Blocks before a breakpoint at which the API also looks for a cache hit (Messages API docs,
"Prompt caching": the automatic prefix check covers about 20 blocks before each breakpoint)."""


@dataclass(frozen=True, kw_only=True)
class CacheUsage:
    """One request's prompt split as the API's ``usage`` reports it (tokens)."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int

    @property
    def total(self) -> int:
        """The whole prompt (tokens)."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def read_share(self) -> float:
        """The share of the prompt read from the cache (0 to 1)."""
        return self.cache_read_input_tokens / self.total if self.total else 0.0


def prompt_blocks(body: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """The prompt of a ``messages.create`` body as (canonical JSON of a block, has a
    breakpoint), in the order the API caches it: tools, system, then every message block."""

    def canon(block: Any, where: str) -> tuple[str, bool]:
        if isinstance(block, dict):
            marked = "cache_control" in block
            plain = {k: v for k, v in block.items() if k != "cache_control"}
            return where + json.dumps(plain, sort_keys=True, separators=(",", ":")), marked
        return where + json.dumps(block, sort_keys=True, separators=(",", ":")), False

    out = [canon(t, "tool:") for t in body.get("tools") or []]
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    out += [canon(b, "system:") for b in system]
    for index, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out += [canon(b, f"{index}:{message.get('role')}:") for b in content or []]
    return out


@dataclass(kw_only=True)
class PromptCache:
    """See the module docstring. :meth:`account` one request body after the other."""

    entries: set[str] = field(default_factory=set)

    def account(self, body: Mapping[str, Any]) -> CacheUsage:
        """What ``body`` reads from and writes to the cache, then its entries are stored."""
        blocks = prompt_blocks(body)
        digest = hashlib.sha256(str(body.get("model", "")).encode())
        hashes: list[str] = []
        ends: list[int] = []  # bytes of the prompt up to and including each block
        total = 0
        for text, _ in blocks:
            digest.update(text.encode())
            hashes.append(digest.copy().hexdigest())
            total += len(text.encode())
            ends.append(total)
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        read = 0
        for mark in marks:
            for j in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if hashes[j] in self.entries:
                    read = max(read, ends[j])
                    break
        self.entries.update(hashes[m] for m in marks)
        written = max(0, (ends[marks[-1]] if marks else 0) - read)
        rest = max(0, total - read - written)
        return CacheUsage(
            input_tokens=rest // 4,
            cache_creation_input_tokens=written // 4,
            cache_read_input_tokens=read // 4,
        )
