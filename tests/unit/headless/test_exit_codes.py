"""How a finished turn maps to the result subtype and the process exit code."""

from __future__ import annotations

import pytest

from lsp_agent.headless.exit_codes import ExitCode, classify


@pytest.mark.parametrize("stop", ["end_turn", "max_tokens", "refusal"])
def test_normal_stops_succeed(stop: str) -> None:
    outcome = classify(stop_reason=stop, error=None, interrupted=False)
    assert (outcome.subtype, outcome.is_error, outcome.exit_code) == ("success", False, 0)
    assert outcome.error is None


def test_max_turns_is_exit_3() -> None:
    outcome = classify(stop_reason="max_turn_requests", error=None, interrupted=False, max_turns=2)
    assert outcome.subtype == "error_max_turns"
    assert outcome.exit_code == ExitCode.MAX_TURNS == 3
    assert outcome.is_error
    assert outcome.error == "reached the maximum number of turns (2)"


def test_model_error_is_exit_1() -> None:
    outcome = classify(stop_reason="end_turn", error="connection refused", interrupted=False)
    assert outcome.subtype == "error_during_execution"
    assert outcome.exit_code == ExitCode.ERROR == 1
    assert outcome.error == "connection refused"


def test_error_beats_max_turns() -> None:
    outcome = classify(stop_reason="max_turn_requests", error="boom", interrupted=False)
    assert outcome.exit_code == ExitCode.ERROR


@pytest.mark.parametrize(
    ("stop", "interrupted"), [("cancelled", False), ("end_turn", True), ("cancelled", True)]
)
def test_interrupt_is_exit_130(stop: str, interrupted: bool) -> None:
    outcome = classify(stop_reason=stop, error=None, interrupted=interrupted)
    assert outcome.exit_code == ExitCode.INTERRUPTED == 130
    assert outcome.subtype == "error_during_execution"
    assert outcome.error is not None and "interrupted" in outcome.error


def test_exit_code_values_are_documented_ones() -> None:
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 130]


def test_cli_constants_match() -> None:
    from lsp_agent import cli

    assert cli._EXIT_USAGE == ExitCode.USAGE
    assert cli._EXIT_INTERRUPTED == ExitCode.INTERRUPTED
