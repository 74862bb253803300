"""Bash word text: quote removal for unquoted, double-quoted and ``$'...'`` words, the pieces
of a word node, and walks over tree-sitter nodes that stop at substitutions."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node


def assemble(node: Node, text: Callable[[Node], str]) -> tuple[str, list[str], bool, str]:
    """A word node's literal text after quote removal, why it is dynamic (empty: it is not),
    whether it has an unquoted glob, and its skeleton (quoted text ``Q``, escapes ``E``,
    dynamic parts ``D``; unquoted text kept, so brace expansion can be spotted)."""
    parts: list[str] = []
    why: list[str] = []
    glob = False
    skeleton: list[str] = []
    for piece_type, piece in pieces(node, text):
        if piece_type == "literal":
            parts.append(piece)
            skeleton.append("Q")
        elif piece_type == "unquoted":
            value, has_glob, bad = unquote_word(piece)
            if bad:
                why.append(bad)
            glob = glob or has_glob
            parts.append(value)
            skeleton.append(re.sub(r"\\.", "E", piece, flags=re.DOTALL))
        else:
            why.append(piece)
            skeleton.append("D")
    return "".join(parts), why, glob, "".join(skeleton)


_DYNAMIC_WORDS: Mapping[str, str] = MappingProxyType(
    {
        "simple_expansion": "parameter expansion",
        "expansion": "parameter expansion",
        "command_substitution": "command substitution",
        "arithmetic_expansion": "arithmetic expansion",
        "brace_expression": "brace expansion",
    }
)
"""Word node types without a literal value, and why."""

_DYNAMIC_IN_STRING: Mapping[str, str] = MappingProxyType(
    {
        "simple_expansion": "parameter expansion",
        "expansion": "parameter expansion",
        "command_substitution": "command substitution",
        "arithmetic_expansion": "arithmetic expansion",
    }
)
"""Parts of a double-quoted string without a literal value, and why."""


def pieces(node: Node, text: Callable[[Node], str]) -> Iterator[tuple[str, str]]:
    """Yield ``("literal", text)``, ``("unquoted", raw)`` or ``("dynamic", why)`` for the parts
    of a word node; ``text`` gives a node's source text."""
    kind = node.type
    if kind in ("word", "number"):
        yield ("unquoted", text(node))
    elif kind == "raw_string":
        yield ("literal", text(node)[1:-1])
    elif kind in ("string", "translated_string"):
        yield from _string_pieces(node, text)
    elif kind == "ansi_c_string":
        decoded = ansi_c(text(node)[2:-1])
        yield ("dynamic", "unusual $'...' escape") if decoded is None else ("literal", decoded)
    elif kind == "concatenation":
        for child in node.children:
            yield from pieces(child, text)
    elif kind == "process_substitution":
        # The command sees a pipe's name; what runs inside is analysed on its own.
        yield ("literal", "/dev/fd/63")
    else:
        yield ("dynamic", _DYNAMIC_WORDS.get(kind, f"{kind} word"))


def _string_pieces(node: Node, text: Callable[[Node], str]) -> Iterator[tuple[str, str]]:
    for child in node.children:
        if child.type == "string_content":
            value, bad = unescape_double(text(child))
            yield ("dynamic", bad) if bad else ("literal", value)
        elif child.type not in ('"', '$"', "$"):
            yield ("dynamic", _DYNAMIC_IN_STRING.get(child.type, f"{child.type} in a string"))


def outer(node: Node) -> Iterator[Node]:
    """Descendants of ``node`` without entering command or process substitutions (their
    insides are walked as statements of their own)."""
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        yield current
        if current.type not in ("command_substitution", "process_substitution"):
            stack.extend(reversed(current.children))


def descendants(node: Node) -> Iterator[Node]:
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def unquote_word(text: str) -> tuple[str, bool, str | None]:
    """Quote removal for an unquoted word: ``(value, has_glob, problem)``."""
    out: list[str] = []
    glob = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            if i + 1 >= len(text):
                return "".join(out), glob, "a trailing backslash"
            nxt = text[i + 1]
            if nxt in "\r\n":
                return "".join(out), glob, "a backslash-newline inside a word"
            out.append(nxt)
            i += 2
            continue
        if ch in "*?":
            glob = True
        elif ch == "[":
            return "".join(out), glob, "a [...] glob pattern"
        elif ch in "\r":
            return "".join(out), glob, "a carriage return inside a word"
        elif ch == "$":
            return "".join(out), glob, "a $ the parser did not expand"
        elif ch == "`":
            return "".join(out), glob, "a backquote the parser did not expand"
        out.append(ch)
        i += 1
    return "".join(out), glob, None


def unescape_double(text: str) -> tuple[str, str | None]:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "\n":
                i += 2
                continue
            if nxt in '$`"\\':
                out.append(nxt)
                i += 2
                continue
        if ch in "$`":
            return "".join(out), "an expansion inside double quotes"
        out.append(ch)
        i += 1
    return "".join(out), None


_ANSI_SIMPLE = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "e": "\x1b",
    "E": "\x1b",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def ansi_c(body: str) -> str | None:
    """Decode the body of ``$'...'``; ``None`` for escapes this decoder does not know."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(body):
            return None
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
        elif nxt == "x":
            m = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2 :])
            if not m:
                return None
            out.append(chr(int(m.group(), 16)))
            i += 2 + len(m.group())
        elif nxt in "uU":
            m = re.match(rf"[0-9A-Fa-f]{{1,{4 if nxt == 'u' else 8}}}", body[i + 2 :])
            if not m:
                return None
            out.append(chr(int(m.group(), 16)))
            i += 2 + len(m.group())
        elif nxt in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert m is not None
            out.append(chr(int(m.group(), 8) & 0xFF))
            i += 1 + len(m.group())
        else:
            return None
    value = "".join(out)
    return None if "\x00" in value else value
