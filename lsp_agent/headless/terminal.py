"""Text from files, servers and models made safe to print on the user's terminal."""

from __future__ import annotations

import unicodedata

# Unicode categories that print nothing visible but can change what the terminal does or
# shows: controls (ESC starts an escape sequence; OSC 52 writes the clipboard), formatting
# characters (bidirectional overrides reorder what is shown) and the line and paragraph
# separators.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})


def plain(text: str, *, one_line: bool = False) -> str:
    """``text`` safe to print on a terminal: control and invisible formatting characters
    escaped as Python writes them (``\\x1b``, ``\\u202e``). Newlines and tabs are kept, or
    escaped too (``\\n``, ``\\t``) with ``one_line``, for a table cell. A repository's
    ``.mcp.json``, a server's errors, a session's title and a run's prompt are all printed,
    and an escape sequence in them would otherwise drive the terminal."""
    keep = "" if one_line else "\n\t"
    return "".join(
        ch if ch in keep or unicodedata.category(ch) not in _HIDDEN else ascii(ch)[1:-1]
        for ch in text
    )
