"""Tokenising ``sed`` scripts: which files a script reads and whether it writes or runs programs.

Used by the read-only proof of ``sed`` (:mod:`lsp_agent.permissions.readonly`): a script is
read-only when it has no ``w``/``W``/``e`` commands and no ``s///w``/``s///e`` flags; ``r``/``R``
commands read files (returned so the sandbox can judge them). Unknown commands and
unterminated commands count as problems (the caller asks). Grammar source: GNU sed manual.

A small scanner reads addresses; each command letter then has its argument reader in
:data:`_COMMANDS` (a letter not in the table is an unknown command).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(kw_only=True)
class _Scanner:
    """A position in one script, and the files its ``r``/``R`` commands read so far."""

    script: str
    pos: int = 0
    reads: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.pos >= len(self.script)

    def at(self, chars: str) -> bool:
        """Whether the next character is one of ``chars`` (false at the end)."""
        return not self.done and self.script[self.pos] in chars

    def skip_blank(self) -> None:
        while self.at(" \t"):
            self.pos += 1

    def skip_digits(self) -> None:
        while not self.done and self.script[self.pos].isdigit():
            self.pos += 1

    def delimited(self, delim: str) -> bool:
        """Move past the closing ``delim``, honouring backslash escapes; false when the text
        ends (or a line ends, unless the delimiter is a newline) first."""
        script, k = self.script, self.pos
        while k < len(script):
            ch = script[k]
            if ch == "\\":
                k += 2
                continue
            if ch == "\n" and delim != "\n":
                return False
            if ch == delim:
                self.pos = k + 1
                return True
            k += 1
        return False

    def address(self) -> bool:
        """Move past one address (a line number, ``first~step``, ``$``, ``/re/`` or ``\\cREc``
        with ``I``/``M`` flags), if there is one; false when a regex is unterminated."""
        if not self.done and self.script[self.pos].isdigit():
            while not self.done and (self.script[self.pos].isdigit() or self.at("~")):
                self.pos += 1
        elif self.at("$"):
            self.pos += 1
        elif self.at("/\\"):
            delim = "/"
            if self.at("\\"):
                if self.pos + 1 >= len(self.script):
                    return False
                self.pos += 1
                delim = self.script[self.pos]
            self.pos += 1
            if not self.delimited(delim):
                return False
            while self.at("IM"):
                self.pos += 1
        return True


def sed_script_check(script: str) -> tuple[str | None, list[str]]:
    """Tokenise a sed script: ``(problem, files_read)``. Problems: ``w``/``W``/``e`` commands,
    ``s`` with ``w``/``e`` flags, unknown commands, unterminated commands."""
    sc = _Scanner(script=script)
    while True:
        sc.skip_blank()
        if sc.done:
            return None, sc.reads
        if sc.at(";\n}"):
            sc.pos += 1
            continue
        problem = _addresses(sc) or _command(sc)
        if problem:
            return problem, sc.reads


def _addresses(sc: _Scanner) -> str | None:
    """Move past ``ADDR``, ``ADDR,ADDR``, ``ADDR,+N``/``ADDR,~N`` and any ``!``."""
    start = sc.pos
    if not sc.address():
        return "unterminated address"
    if sc.pos > start:
        sc.skip_blank()
        if sc.at(","):
            sc.pos += 1
            sc.skip_blank()
            if sc.at("+~"):
                sc.pos += 1
                sc.skip_digits()
            elif not sc.address():
                return "unterminated address"
    sc.skip_blank()
    while sc.at("!"):
        sc.pos += 1
        sc.skip_blank()
    return "address without a command" if sc.done else None


def _command(sc: _Scanner) -> str | None:
    cmd = sc.script[sc.pos]
    sc.pos += 1
    reader = _COMMANDS.get(cmd)
    if reader is None:
        return f"unknown sed command {cmd!r}"
    return reader(sc, cmd)


def _no_argument(sc: _Scanner, cmd: str) -> str | None:
    if cmd == "l":
        sc.skip_digits()  # an optional line length
    return None


def _exit_code(sc: _Scanner, cmd: str) -> str | None:
    sc.skip_blank()
    sc.skip_digits()
    return None


def _label(sc: _Scanner, cmd: str) -> str | None:
    # Labels run to the end of the line (or ';' for b/t/T in GNU sed).
    stop = "\n" if cmd == ":" else "\n;}"
    while not sc.done and not sc.at(stop):
        sc.pos += 1
    return None


def _text(sc: _Scanner, cmd: str) -> str | None:
    while not sc.done and not sc.at("\n"):
        if sc.at("\\"):
            sc.pos += 1
        sc.pos += 1
    return None


def _read_file(sc: _Scanner, cmd: str) -> str | None:
    end = sc.script.find("\n", sc.pos)
    end = len(sc.script) if end < 0 else end
    name = sc.script[sc.pos : end].strip()
    if not name:
        return "r without a file name"
    sc.reads.append(name)
    sc.pos = end
    return None


def _writes(sc: _Scanner, cmd: str) -> str | None:
    return f"the {cmd} command writes files or runs programs"


def _substitute(sc: _Scanner, cmd: str) -> str | None:
    """``s/re/replacement/flags`` and ``y/from/to/``: both parts must be terminated; ``s``
    flags ``w`` (write a file) and ``e`` (run the pattern space) are not read-only."""
    if sc.done or sc.at("\n\\"):
        return f"bad {cmd} command"
    delim = sc.script[sc.pos]
    sc.pos += 1
    if not (sc.delimited(delim) and sc.delimited(delim)):
        return f"unterminated {cmd} command"
    if cmd == "y":
        return None
    while not sc.done and not sc.at(";\n}"):
        flag = sc.script[sc.pos]
        if flag in "we":
            return f"the s///{flag} flag writes files or runs programs"
        if flag not in "gpiImM0123456789 \t":
            return f"unknown s flag {flag!r}"
        sc.pos += 1
    return None


_COMMANDS: Mapping[str, Callable[[_Scanner, str], str | None]] = MappingProxyType(
    {
        **dict.fromkeys("{}=dDgGhHlnNpPxzF", _no_argument),
        **dict.fromkeys("qQ", _exit_code),
        **dict.fromkeys(":btTv", _label),
        **dict.fromkeys("aic", _text),
        **dict.fromkeys("rR", _read_file),
        **dict.fromkeys("wWe", _writes),
        **dict.fromkeys("sy", _substitute),
    }
)
"""Command letter → the reader of its argument (returns a problem, or ``None``)."""
