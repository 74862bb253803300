"""``${VAR}`` and ``${VAR:-default}`` expansion in MCP server definitions.

The syntax and the fields it applies to (command, args, env, url, headers) are Claude Code's
(source: its MCP documentation, "Environment variable expansion in .mcp.json"). A variable
that is not set and has no default is an error naming the variable; nothing else is expanded
(no ``$VAR`` without braces, no command substitution).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PATTERN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ExpansionError(ValueError):
    """A ``${VAR}`` names a variable that is not set and has no default; ``names`` lists
    every such variable of the text, in order."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        listed = ", ".join(names)
        super().__init__(f"environment variable{'s' if len(names) > 1 else ''} not set: {listed}")


def expand(text: str, environ: Mapping[str, str]) -> str:
    """``text`` with every ``${VAR}`` / ``${VAR:-default}`` replaced from ``environ``.

    An empty value counts as set for ``${VAR}`` and as unset for ``${VAR:-default}`` (POSIX
    ``:-``). Raises :class:`ExpansionError` listing the unset variables without a default.
    """
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if default is not None:
            return value if value else default
        if value is None:
            missing.append(name)
            return ""
        return value

    out = _PATTERN.sub(replace, text)
    if missing:
        raise ExpansionError(tuple(dict.fromkeys(missing)))
    return out
