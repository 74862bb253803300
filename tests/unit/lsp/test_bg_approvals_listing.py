"""The editor's watch over background runs' approval requests lists the runs folder only when
the folder changed: an idle server costs one ``stat`` a second, not a listing."""

from __future__ import annotations

import os
import time
from pathlib import Path

from lsp_agent.lsp.bg_approvals import COARSE_MTIME_S, needs_listing, stamp


def test_a_missing_folder_is_never_listed(tmp_path: Path) -> None:
    assert stamp(tmp_path / "runs") is None
    assert not needs_listing(None, None, now=time.time())


def test_an_unchanged_folder_is_listed_once_then_not_until_a_file_arrives(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir(mode=0o700)
    old = time.time() - 60
    os.utime(folder, (old, old))
    first = stamp(folder)
    now = time.time()
    assert needs_listing(None, first, now=now)  # never listed yet
    assert not needs_listing(first, stamp(folder), now=now)  # nothing happened
    temp = folder / ".abc.ask.tmp"
    temp.write_text("{}")
    temp.rename(folder / "abc.0123.ask")  # how a run writes its request
    assert needs_listing(first, stamp(folder), now=time.time())


def test_a_folder_modified_within_the_timestamp_tick_is_listed_again(tmp_path: Path) -> None:
    """On a file system with coarse timestamps a request written in the same tick as the last
    listing leaves the stamp unchanged; a recent modification is therefore listed again."""
    folder = tmp_path / "runs"
    folder.mkdir(mode=0o700)
    current = stamp(folder)
    assert current is not None
    modified = current[2] / 1e9
    assert needs_listing(current, current, now=modified + COARSE_MTIME_S / 2)
    assert not needs_listing(current, current, now=modified + COARSE_MTIME_S + 1)
