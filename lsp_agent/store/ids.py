"""Ids the user types back: a session's or a prompt's, whole or as a unique prefix.

Session ids are UUIDs (Claude Code's form, ``8-4-4-4-12`` hex digits with dashes). Sessions
saved before every id had that form have 32 hex digits without dashes, so ids are compared
without their dashes and in lower case: what the user was shown, in either form, names the
same session. One rule for every command that takes such an id (``--resume``, ``rewind
--session``/``--to``, ``sessions rm``): the whole id, or a prefix of at least
:data:`MIN_PREFIX` characters that only one id has.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

MIN_PREFIX = 6
"""Shortest id prefix accepted (characters, dashes not counted)."""


class IdLookupError(ValueError):
    """No id, or several, match what the user typed; the message says which."""


class AmbiguousIdError(IdLookupError):
    """Several ids start with what the user typed (the message lists them)."""


def random_uuid() -> str:
    """A random UUID (RFC 9562 version 4) in canonical form, as ``str(uuid.uuid4())`` gives:
    16 bytes from :func:`os.urandom` with the version and variant bits set, formatted
    directly (no :class:`uuid.UUID` object: half the cost, on every transcript record)."""
    return _canonical(bytearray(os.urandom(16)))


def _canonical(raw: bytearray) -> str:
    """16 random bytes as a version 4 UUID's canonical text (sets the version and variant)."""
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # variant 10xx (RFC 9562)
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class RandomUuids:
    """Random UUIDs as :func:`random_uuid` gives them, for one writer that needs many (a
    transcript: two records per tool turn): the random bytes come from :func:`os.urandom` 4 KiB
    (256 ids) at a time instead of one system call per id. The same source, the same bits set.
    Not to be shared across a ``fork``: both processes would draw the same ids."""

    POOL_BYTES = 4096

    def __init__(self) -> None:
        self._pool = b""
        self._at = 0

    def __call__(self) -> str:
        """The next id (canonical form)."""
        at = self._at
        if at >= len(self._pool):
            self._pool, at = os.urandom(self.POOL_BYTES), 0
        self._at = at + 16
        return _canonical(bytearray(self._pool[at : at + 16]))


def id_key(text: str) -> str:
    """``text`` as ids are compared: stripped, lower case, without dashes."""
    return text.strip().lower().replace("-", "")


def resolve_id(ids: Iterable[str], wanted: str, *, what: str, where: str = "") -> str:
    """The one id of ``ids`` that ``wanted`` names: the same id (dashes and case aside), or
    else the only id it is a prefix of (:data:`MIN_PREFIX`+ characters). ``what`` names the
    kind ("session", "prompt") and ``where`` ends the "no such" message (e.g. " in /proj").
    Raises :class:`IdLookupError`: nothing matches (a too-short prefix says the minimum), or
    several do (:class:`AmbiguousIdError`, listed)."""
    known = list(dict.fromkeys(ids))
    key = id_key(wanted)
    exact = [i for i in known if id_key(i) == key]
    if exact:
        return exact[0]
    if len(key) < MIN_PREFIX:
        raise IdLookupError(
            f"no {what} {wanted!r}{where} (give the id, or {MIN_PREFIX}+ characters of it)"
        )
    matches = [i for i in known if id_key(i).startswith(key)]
    if not matches:
        raise IdLookupError(f"no {what} {wanted!r}{where}")
    if len(matches) > 1:
        raise AmbiguousIdError(f"{wanted!r} is ambiguous: it starts {', '.join(matches)}")
    return matches[0]
