"""Reading what a hook printed on stdout: every JSON object in it, the malformed ones, the noise.

A hook's stdout is often more than one clean JSON object: shell start-up files print banners,
scripts print a progress line before their answer, or print one object per decision. Reading
only "stdout is exactly one JSON object" and ignoring everything else fails open: a hook that
prints ``{"continue": true}`` and then a ``deny`` on the next line would be skipped and the tool
would run. The rule here (documented in docs/security.md) is:

- stdout that is one JSON value as a whole (pretty-printed over several lines included) is
  that value;
- otherwise it is read line by line: a line that starts with ``{`` or ``[`` starts a JSON value
  (which may span lines) and must parse as an object; a line that contains ``{"`` anywhere is
  also JSON-looking (an answer glued behind a prefix) and counts as malformed;
- every other line is noise (shell start-up output): ignored for decisions, logged, and shown
  to the user;
- two objects from the same hook that give one field different values conflict.

What the caller does with that (deny beats everything, malformed or conflicting output asks)
is in :mod:`lsp_agent.hooks.runner`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_NOTE_CHARS = 2000
"""How much of a hook's stdout is quoted back to the user (characters)."""

_DECODER = json.JSONDecoder()


@dataclass(frozen=True, kw_only=True)
class HookStdout:
    """The parts of one hook's stdout: ``objects`` in the order printed, ``malformed`` lines
    that look like JSON but are not an object, ``noise`` lines that are not JSON at all."""

    objects: tuple[dict[str, Any], ...] = ()
    malformed: tuple[str, ...] = ()
    noise: tuple[str, ...] = ()

    @property
    def plain(self) -> bool:
        """Exactly one object and nothing else (the common, unremarkable answer)."""
        return len(self.objects) == 1 and not self.malformed and not self.noise


def parse_stdout(text: str) -> HookStdout:
    """Split a hook's stdout into JSON objects, malformed JSON-looking lines and noise lines
    (see the module docstring). Never raises; blank lines are dropped."""
    stripped = text.strip()
    if not stripped:
        return HookStdout()
    try:
        whole = json.loads(stripped)
    except (ValueError, RecursionError):
        pass
    else:
        if isinstance(whole, dict):
            return HookStdout(objects=(whole,))
        if stripped[0] in "{[":
            return HookStdout(malformed=(_first_line(stripped),))
        return HookStdout(noise=tuple(line for line in stripped.splitlines() if line.strip()))
    objects: list[dict[str, Any]] = []
    malformed: list[str] = []
    noise: list[str] = []
    at = 0
    while at < len(text):
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        line = text[at:end]
        body = line.strip()
        start = at + (len(line) - len(line.lstrip()))
        if not body:
            at = end + 1
            continue
        if body[0] in "{[":
            value, at = _value_at(text, start, end)
            if isinstance(value, dict):
                objects.append(value)
            else:
                malformed.append(value)
            continue
        if '{"' in body:
            malformed.append(body)
        else:
            noise.append(body)
        at = end + 1
    return HookStdout(objects=tuple(objects), malformed=tuple(malformed), noise=tuple(noise))


def _value_at(text: str, start: int, end: int) -> tuple[dict[str, Any] | str, int]:
    """The JSON object starting at ``start`` (its line ends at ``end``) and where reading goes
    on; a value that is not an object, does not parse, or has text glued behind it on its last
    line gives its first line instead (malformed)."""
    try:
        value, stop = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return text[start:end].strip(), end + 1
    rest_end = text.find("\n", stop)
    rest_end = len(text) if rest_end == -1 else rest_end
    if not isinstance(value, dict) or text[stop:rest_end].strip():
        return text[start:rest_end].strip().splitlines()[0], rest_end + 1
    return value, rest_end + 1


def conflicts(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    """The fields (``continue``, ``hookSpecificOutput.permissionDecision`` ...) that two of
    ``objects`` set to different values; empty when they agree or there is only one."""
    seen: dict[str, Any] = {}
    found: list[str] = []
    for obj in objects:
        for key, value in _fields(obj):
            if key in seen and seen[key] != value and key not in found:
                found.append(key)
            seen.setdefault(key, value)
    return found


def _fields(obj: Mapping[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in obj.items():
        if key == "hookSpecificOutput" and isinstance(value, Mapping):
            out.extend((f"{key}.{k}", v) for k, v in value.items() if k != "hookEventName")
        elif key not in ("systemMessage", "suppressOutput"):
            out.append((key, value))
    return out


def quote(text: str) -> str:
    """A hook's stdout as shown to the user: stripped and cut to :data:`MAX_NOTE_CHARS`."""
    text = text.strip()
    return text if len(text) <= MAX_NOTE_CHARS else text[:MAX_NOTE_CHARS] + " …[truncated]"


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else text
