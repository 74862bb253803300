"""Tokenising ``sed`` scripts: which files a script reads and whether it writes or runs programs.

Used by the read-only proof of ``sed`` (:mod:`lsp_agent.permissions.readonly`): a script is
read-only when it has no ``w``/``W``/``e`` commands and no ``s///w``/``s///e`` flags; ``r``/``R``
commands read files (returned so the sandbox can judge them). Unknown commands and
unterminated commands count as problems (the caller asks). Grammar source: GNU sed manual.
"""

from __future__ import annotations


def sed_script_check(script: str) -> tuple[str | None, list[str]]:
    """Tokenise a sed script: ``(problem, files_read)``. Problems: ``w``/``W``/``e`` commands,
    ``s`` with ``w``/``e`` flags, unknown commands, unterminated commands."""
    reads: list[str] = []
    i, n = 0, len(script)

    def skip_blank(k: int) -> int:
        while k < n and script[k] in " \t":
            k += 1
        return k

    def delimited(k: int, delim: str) -> int:
        # Return the index after the closing delimiter, honouring backslash escapes.
        while k < n:
            ch = script[k]
            if ch == "\\":
                k += 2
                continue
            if ch == "\n" and delim != "\n":
                return -1
            if ch == delim:
                return k + 1
            k += 1
        return -1

    def address(k: int) -> int:
        if k < n and script[k].isdigit():
            while k < n and (script[k].isdigit() or script[k] == "~"):
                k += 1
        elif k < n and script[k] == "$":
            k += 1
        elif k < n and script[k] in "/\\":
            delim = "/"
            if script[k] == "\\":
                if k + 1 >= n:
                    return -1
                delim, k = script[k + 1], k + 1
            k = delimited(k + 1, delim)
            if k < 0:
                return -1
            while k < n and script[k] in "IM":
                k += 1
        return k

    while i < n:
        i = skip_blank(i)
        if i >= n:
            break
        if script[i] in ";\n}":
            i += 1
            continue
        start = i
        i = address(i)
        if i < 0:
            return "unterminated address", reads
        if i > start:
            i = skip_blank(i)
            if i < n and script[i] == ",":
                i = skip_blank(i + 1)
                if i < n and script[i] in "+~":
                    i += 1
                    while i < n and script[i].isdigit():
                        i += 1
                else:
                    i = address(i)
                    if i < 0:
                        return "unterminated address", reads
        i = skip_blank(i)
        while i < n and script[i] == "!":
            i = skip_blank(i + 1)
        if i >= n:
            return "address without a command", reads
        cmd = script[i]
        i += 1
        if cmd in "{}=dDgGhHlnNpPxzF":
            if cmd == "l":
                while i < n and script[i].isdigit():
                    i += 1
            continue
        if cmd in "qQ":
            i = skip_blank(i)
            while i < n and script[i].isdigit():
                i += 1
            continue
        if cmd in ":btTv":
            # Labels run to the end of the line (or ';' for b/t/T in GNU sed).
            while i < n and script[i] not in "\n" and not (cmd != ":" and script[i] in ";}"):
                i += 1
            continue
        if cmd in "aic":
            while i < n and script[i] != "\n":
                if script[i] == "\\":
                    i += 1
                i += 1
            continue
        if cmd in "rR":
            end = script.find("\n", i)
            end = n if end < 0 else end
            name = script[i:end].strip()
            if not name:
                return "r without a file name", reads
            reads.append(name)
            i = end
            continue
        if cmd in "wWe":
            return f"the {cmd} command writes files or runs programs", reads
        if cmd in "sy":
            if i >= n or script[i] in "\n\\":
                return f"bad {cmd} command", reads
            delim = script[i]
            i = delimited(i + 1, delim)
            if i < 0:
                return f"unterminated {cmd} command", reads
            i = delimited(i, delim)
            if i < 0:
                return f"unterminated {cmd} command", reads
            if cmd == "s":
                while i < n and script[i] not in ";\n}":
                    flag = script[i]
                    if flag in "we":
                        return f"the s///{flag} flag writes files or runs programs", reads
                    if flag not in "gpiImM0123456789 \t":
                        return f"unknown s flag {flag!r}", reads
                    i += 1
            continue
        return f"unknown sed command {cmd!r}", reads
    return None, reads
