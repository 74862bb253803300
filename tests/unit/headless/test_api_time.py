"""``duration_api_ms``: the union of the answered requests' spans within the turn."""

from __future__ import annotations

from lsp_agent.headless.responses import ResponseLog


def test_overlapping_spans_count_once_and_stay_inside_the_turn() -> None:
    log = ResponseLog(model="m")
    log.add_span(1.0, 3.0)  # the turn's request
    log.add_span(2.0, 4.0)  # a title asked for meanwhile
    log.add_span(6.0, 7.0)
    log.add_span(0.0, 0.5)  # before the turn
    assert log.api_ms_between(1.0, 8.0) == 4000.0
    assert log.api_ms_between(2.5, 6.5) == 2000.0  # clipped at both ends
    assert log.api_ms_between(4.0, 6.0) == 0.0
