"""Reading a transcript without decoding it first: the envelope of every line, records on demand.

Loading a long session to replay it needs the whole file to find the active branch (a rewind
makes the newest record's parent an older one), but not every record decoded before the first
update goes out. :func:`scan_transcript` reads the file once and takes each line's envelope
(``type``, ``uuid``, ``parentUuid``, ``version``) from the fixed prefix that
:func:`~lsp_agent.store.records.encode` writes, with one regular expression; a line without
that prefix (written by hand or by another program) is decoded in full at once.
:meth:`LazyTranscript.record` decodes a line when it is needed. The last line is always
decoded at once: it is the branch's leaf, where the session goes on, and a crash can tear it.

A corrupt line is skipped with the same warning as :func:`~lsp_agent.store.history.
load_transcript` gives, when it is found: at the scan for lines without the prefix, on demand
for the others (a line whose envelope survived but whose body did not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.store.records import FORMAT_VERSION, KINDS, Record, RecordError, decode

_HEAD = re.compile(
    rb'\{"type":"(\w+)","uuid":"([\w-]+)","parentUuid":(?:null|"([\w-]+)"),'
    rb'"sessionId":"[\w-]*","timestamp":"[\w:.+-]*","version":(\d{1,9})[,}]'
)
"""The envelope as :func:`~lsp_agent.store.records.encode` writes it, for ids made of word
characters and dashes (uuids, hex); any other line is decoded in full."""


@dataclass(frozen=True, slots=True)
class Head:
    """The envelope of one line: enough to follow the chain and to pick lines by kind."""

    type: str
    uuid: str
    parent_uuid: str | None


@dataclass(kw_only=True)
class LazyTranscript:
    """A scanned transcript: ``heads[i]`` is the envelope of the i-th record in file order;
    :meth:`record` decodes it. ``warnings`` name the file and line of what was skipped, and
    grow as records are decoded."""

    path: Path
    heads: list[Head]
    lines: list[bytes]
    numbers: list[int]
    warnings: list[str] = field(default_factory=list)
    _decoded: dict[int, Record | None] = field(default_factory=dict)

    def record(self, i: int) -> Record | None:
        """The record at position ``i`` (``None``: its line is corrupt; a warning says so)."""
        if i in self._decoded:
            return self._decoded[i]
        found = _decode_line(self.path, self.numbers[i], self.lines[i], self.warnings, torn=False)
        self._decoded[i] = found
        return found


def scan_transcript(path: Path) -> LazyTranscript:
    """Read ``path`` and take the envelope of every line. Raises ``OSError`` when the file
    cannot be read; never for its content (bad lines become warnings)."""
    data = path.read_bytes()
    pieces = data.split(b"\n")
    torn = len(pieces)  # the piece after the last newline: empty, or a torn line
    final = next((n for n in range(len(pieces), 0, -1) if not _blank(pieces[n - 1])), 0)
    scanned = LazyTranscript(path=path, heads=[], lines=[], numbers=[])
    newer: list[int] = []
    unknown: set[str] = set()
    for number, line in enumerate(pieces, start=1):
        if _blank(line):
            continue
        match = _HEAD.match(line) if number != final else None
        if match is not None:
            kind = match[1].decode()
            parent = match[3].decode() if match[3] is not None else None
            head = Head(type=kind, uuid=match[2].decode(), parent_uuid=parent)
            version = int(match[4])
        else:
            record = _decode_line(path, number, line, scanned.warnings, torn=number == torn)
            if record is None:
                continue
            scanned._decoded[len(scanned.heads)] = record
            head = Head(type=record.type, uuid=record.uuid, parent_uuid=record.parent_uuid)
            version = record.version
        if version > FORMAT_VERSION:
            newer.append(version)
        if head.type not in KINDS:
            unknown.add(head.type)
        scanned.heads.append(head)
        scanned.lines.append(line)
        scanned.numbers.append(number)
    if newer:
        scanned.warnings.append(
            f"{path}: written by a newer lsp-agent (record format {max(newer)}, this one reads "
            f"{FORMAT_VERSION}); loaded what this version understands"
        )
    if unknown:
        scanned.warnings.append(f"{path}: record kinds ignored: {', '.join(sorted(unknown))}")
    return scanned


def _blank(line: bytes) -> bool:
    return not line or line.isspace()


def _decode_line(
    path: Path, number: int, line: bytes, warnings: list[str], *, torn: bool
) -> Record | None:
    try:
        # As read by line (a complete line ends with its newline; the error names match).
        return decode(line if torn else line + b"\n")
    except RecordError as exc:
        what = "torn last line" if torn else "corrupt line"
        warnings.append(f"{path}:{number}: {what} skipped: {exc}")
        return None
