"""The versioned store: matching by text, stale bridge reports, bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.diagnostics.model import EDITOR_CHANNEL, Report
from lsp_agent.diagnostics.store import DiagnosticsStore, StaleReportError

P = Path("/w/a.py")


def report(
    channel: str = "ruff", *, version: int | None = None, digest: str | None = None, path: Path = P
) -> Report:
    return Report(path=path, channel=channel, diagnostics=(), version=version, digest=digest)


def test_find_matches_digest_first_and_never_an_unattributed_report() -> None:
    store = DiagnosticsStore()
    store.put(report(digest="d1", version=1))
    store.put(report(version=None, digest=None))
    assert store.find(P, "ruff", digest="d1") is not None
    assert store.find(P, "ruff", digest="d2", version=1) is None  # digest decides, not version
    assert store.find(P, "ruff") is None
    assert store.latest(P, "ruff") is not None


def test_editor_reports_match_by_version() -> None:
    store = DiagnosticsStore()
    store.put(report(EDITOR_CHANNEL, version=3))
    assert store.find(P, EDITOR_CHANNEL, version=3) is not None
    assert store.find(P, EDITOR_CHANNEL, version=4) is None


def test_a_bridge_report_older_than_a_known_version_is_refused() -> None:
    store = DiagnosticsStore()
    store.note_editor_version(P, 5)
    with pytest.raises(StaleReportError, match="version 4 arrived after version 5"):
        store.put(report(EDITOR_CHANNEL, version=4))
    assert store.latest(P, EDITOR_CHANNEL) is None
    store.put(report(EDITOR_CHANNEL, version=5))
    assert store.editor_version(P) == 5


def test_memory_is_bounded_per_source_and_in_documents() -> None:
    store = DiagnosticsStore(max_documents=2, reports_per_source=2)
    for i in range(5):
        store.put(report(digest=f"d{i}"))
    assert store.find(P, "ruff", digest="d2") is None
    assert store.find(P, "ruff", digest="d4") is not None
    store.put(report(path=Path("/w/b.py")))
    store.put(report(path=Path("/w/c.py")))
    assert P not in set(store.documents())


async def test_watch_wakes_on_a_report_for_the_document() -> None:
    store = DiagnosticsStore()
    seen: list[Report] = []
    remove = store.add_listener(seen.append)
    with store.watch([P]) as event:
        store.put(report(path=Path("/w/other.py")))
        assert not event.is_set()
        store.put(report())
        assert event.is_set()
    remove()
    store.put(report())
    assert len(seen) == 2
