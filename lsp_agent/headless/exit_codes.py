"""Exit codes of ``lsp-agent`` and how a finished turn maps to one.

0 success · 1 error during execution (model error, tool machinery failure) · 2 usage error ·
3 the turn stopped at ``--max-turns`` · 130 interrupted by SIGINT (128 + signal 2, the shell
convention). The ``subtype`` names are Claude Code's ``-p`` result subtypes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Literal


class ExitCode(IntEnum):
    """Process exit codes of every ``lsp-agent`` subcommand."""

    OK = 0
    ERROR = 1
    USAGE = 2
    MAX_TURNS = 3
    INTERRUPTED = 130


ResultSubtype = Literal[
    "success", "error_max_turns", "error_during_execution", "error_max_budget_usd"
]


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """How a turn ended, for the result object and the exit code.

    ``error`` is a message for the user (``None`` on success).
    """

    subtype: ResultSubtype
    is_error: bool
    exit_code: ExitCode
    error: str | None = None


def classify(
    *,
    stop_reason: str,
    error: str | None,
    interrupted: bool,
    max_turns: int | None = None,
    budget_exceeded: bool = False,
) -> Outcome:
    """Map a turn's ``stop_reason`` (``end_turn``, ``max_tokens``, ``max_turn_requests``,
    ``refusal``, ``cancelled``) and ``error`` to an :class:`Outcome`.

    Precedence: an interrupt (SIGINT) wins, then ``--max-budget-usd`` (``budget_exceeded``:
    ``error_max_budget_usd``, exit 1), then an error, then the max-turns stop. A
    ``refusal`` or ``max_tokens`` stop is a successful run whose ``stop_reason`` says why it is
    short, as in Claude Code.
    """
    if interrupted or stop_reason == "cancelled":
        return Outcome(
            subtype="error_during_execution",
            is_error=True,
            exit_code=ExitCode.INTERRUPTED,
            error=error or "interrupted: the turn was cancelled",
        )
    if budget_exceeded:
        return Outcome(
            subtype="error_max_budget_usd",
            is_error=True,
            exit_code=ExitCode.ERROR,
            error=error or "reached the maximum budget",
        )
    if error is not None:
        return Outcome(
            subtype="error_during_execution", is_error=True, exit_code=ExitCode.ERROR, error=error
        )
    if stop_reason == "max_turn_requests":
        limit = f" ({max_turns})" if max_turns is not None else ""
        return Outcome(
            subtype="error_max_turns",
            is_error=True,
            exit_code=ExitCode.MAX_TURNS,
            error=f"reached the maximum number of turns{limit}",
        )
    return Outcome(subtype="success", is_error=False, exit_code=ExitCode.OK)
