"""JSON with source positions: where each value of a settings file is, for exact diagnostics.

:func:`parse_json` returns the value (as :func:`json.loads` would) and a map from JSON paths
(tuples of keys and indexes) to :class:`Span` offsets; :func:`parse_document` also lists
duplicate object keys (JSON parsers keep the last value silently, so an earlier ``deny`` list
would vanish). A syntax error becomes a :class:`JsonSyntaxError` with the offset it was found
at. Offsets are Python string indexes (code points); :func:`position` turns one into a 0-based
``(line, character)`` pair.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

JsonPath = tuple[str | int, ...]


@dataclass(frozen=True, kw_only=True)
class Span:
    """``[start, end)`` code-point offsets of a value; ``key_start``/``key_end`` of its key when
    it is an object member."""

    start: int
    end: int
    key_start: int | None = None
    key_end: int | None = None


class JsonSyntaxError(ValueError):
    """The text is not JSON; ``offset`` is where the problem was found (code points)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


def position(text: str, offset: int) -> tuple[int, int]:
    """0-based ``(line, character)`` of ``offset`` in ``text`` (characters in code points;
    ``\\r\\n``, ``\\n`` and ``\\r`` end lines)."""
    offset = max(0, min(offset, len(text)))
    line = 0
    start = 0
    i = 0
    while i < offset:
        ch = text[i]
        if ch == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
            if i + 1 >= offset:
                break
            i += 1
            ch = "\n"
        if ch in "\r\n":
            line += 1
            start = i + 1
        i += 1
    return line, offset - start


@dataclass(frozen=True, kw_only=True)
class JsonDocument:
    """A parsed JSON text: its ``value``, the ``spans`` of its values (the last occurrence of
    a duplicated key), and ``duplicates``: ``(path, span)`` of every *earlier* occurrence of a
    key that appears again in the same object (its value is lost)."""

    value: Any
    spans: dict[JsonPath, Span]
    duplicates: tuple[tuple[JsonPath, Span], ...] = ()


def parse_document(text: str) -> JsonDocument:
    """Parse ``text``; raises :class:`JsonSyntaxError`. Duplicate object keys keep the last
    value (as :mod:`json` does) and are listed in :attr:`JsonDocument.duplicates`."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonSyntaxError(exc.msg, exc.pos) from None
    except RecursionError:
        raise JsonSyntaxError("the JSON is nested too deeply", 0) from None
    spans: dict[JsonPath, Span] = {}
    duplicates: list[tuple[JsonPath, Span]] = []
    _Scanner(text, spans, duplicates).value(0, ())
    return JsonDocument(value=value, spans=spans, duplicates=tuple(duplicates))


def parse_json(text: str) -> tuple[Any, dict[JsonPath, Span]]:
    """Parse ``text`` into ``(value, spans)``; raises :class:`JsonSyntaxError`.

    Duplicate object keys keep the last value (as :mod:`json` does); see
    :func:`parse_document` to find them.
    """
    document = parse_document(text)
    return document.value, document.spans


class _Scanner:
    """Walks already-valid JSON recording spans (no validation of its own)."""

    def __init__(
        self,
        text: str,
        spans: dict[JsonPath, Span],
        duplicates: list[tuple[JsonPath, Span]],
    ) -> None:
        self.text = text
        self.spans = spans
        self.duplicates = duplicates
        self.decoder = json.JSONDecoder()

    def ws(self, i: int) -> int:
        text = self.text
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        return i

    def value(self, i: int, path: JsonPath, key: tuple[int, int] | None = None) -> int:
        i = self.ws(i)
        start = i
        ch = self.text[i]
        if ch == "{":
            i = self.ws(i + 1)
            if self.text[i] == "}":
                i += 1
            else:
                seen: set[str] = set()
                while True:
                    i = self.ws(i)
                    key_start = i
                    name, i = self.decoder.raw_decode(self.text, i)
                    key_end = i
                    i = self.ws(i)
                    if name in seen:
                        # The earlier value is about to be replaced by this one.
                        self.duplicates.append(((*path, name), self.spans[(*path, name)]))
                    seen.add(name)
                    i = self.value(i + 1, (*path, name), (key_start, key_end))
                    i = self.ws(i)
                    if self.text[i] == ",":
                        i += 1
                        continue
                    i += 1
                    break
        elif ch == "[":
            i = self.ws(i + 1)
            if self.text[i] == "]":
                i += 1
            else:
                index = 0
                while True:
                    i = self.value(i, (*path, index))
                    index += 1
                    i = self.ws(i)
                    if self.text[i] == ",":
                        i += 1
                        continue
                    i += 1
                    break
        else:
            _, i = self.decoder.raw_decode(self.text, i)
        self.spans[path] = Span(
            start=start,
            end=i,
            key_start=key[0] if key else None,
            key_end=key[1] if key else None,
        )
        return i
