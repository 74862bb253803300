"""Ids typed back by the user: either form of a UUID, or a unique prefix of 6+ characters."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from lsp_agent.store.ids import IdLookupError, RandomUuids, random_uuid, resolve_id

A = "6f6b7c0e-b19d-4633-9505-bd78be01c548"
B = "6f6b7c0e-ffff-4633-9505-bd78be01c548"
OLD = "94a568a58b744430a342898b6c9bbe2e"


def test_either_form_and_case_names_the_same_id() -> None:
    assert resolve_id([A, OLD], A.replace("-", "").upper(), what="session") == A
    assert resolve_id([A, OLD], "94a568a5-8b74-4430-a342-898b6c9bbe2e", what="session") == OLD


def test_a_unique_prefix_of_six_or_more() -> None:
    assert resolve_id([A, OLD], "6f6b7c", what="session") == A
    assert resolve_id([A, B], "6f6b7c0e-b1", what="session") == A


def test_too_short_unknown_and_ambiguous_say_so() -> None:
    with pytest.raises(IdLookupError, match=r"no session '6f6b' in /p \(give the id, or 6\+"):
        resolve_id([A], "6f6b", what="session", where=" in /p")
    with pytest.raises(IdLookupError, match=r"^no prompt 'abcdef12'$"):
        resolve_id([A], "abcdef12", what="prompt")
    with pytest.raises(IdLookupError, match=rf"'6f6b7c0e' is ambiguous: it starts {A}, {B}"):
        resolve_id([A, B], "6f6b7c0e", what="session")


@pytest.mark.parametrize("source", ["function", "pool"])
def test_random_uuids_are_canonical_version_4_and_distinct(source: str) -> None:
    # 2000 ids: the pool is refilled several times (256 ids per refill).
    make = random_uuid if source == "function" else RandomUuids()
    made = [make() for _ in range(2000)]
    assert len(set(made)) == len(made)
    for text in made[:300]:
        parsed = uuid.UUID(text)
        assert str(parsed) == text  # canonical: lower case, 8-4-4-4-12
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


@pytest.mark.parametrize("source", ["function", "clock"])
def test_record_timestamps_are_utc_with_milliseconds(source: str) -> None:
    from lsp_agent.store.records import Clock, now

    clock = now if source == "function" else Clock()
    for _ in range(3):  # the clock's second cached, then reused
        before = datetime.now(UTC).replace(microsecond=0)
        stamp = clock()
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp)
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        assert before <= parsed <= datetime.now(UTC) + timedelta(milliseconds=1)


def test_the_clock_formats_each_second_as_now_does(monkeypatch: pytest.MonkeyPatch) -> None:
    from lsp_agent.store import records

    clock = records.Clock()
    base = 1_767_225_599 * 1_000_000_000  # 2025-12-31T23:59:59Z: the next second is a new year
    for ns in (base, base + 5_000_000, base + 999_999_999, base + 1_000_000_000, base + 7):
        monkeypatch.setattr(records.time, "time_ns", lambda ns=ns: ns)
        assert clock() == records.now()
