"""New / fixed / pre-existing classification across edits."""

from __future__ import annotations

from lsp_agent.diagnostics.classify import classify, line_map
from lsp_agent.diagnostics.model import Diagnostic, Position, Range


def diag(line: int, message: str, *, code: str = "E1", source: str = "s") -> Diagnostic:
    return Diagnostic(
        range=Range(start=Position(line=line, character=0), end=Position(line=line, character=1)),
        severity=1,
        message=message,
        source=source,
        code=code,
    )


OLD = "import os\n\ndef f():\n    return x\n"


def test_diagnostic_moved_by_lines_inserted_above_is_preexisting() -> None:
    new = "import os\nimport sys\n\n\ndef f():\n    return x\n"
    result = classify(
        before=[diag(3, "x undefined")], after=[diag(5, "x undefined")], old_text=OLD, new_text=new
    )
    assert result.new == () and result.fixed == ()
    assert [d.line for d in result.preexisting] == [5]


def test_new_and_fixed_are_told_apart() -> None:
    new = "import os\n\ndef f():\n    return y\n"
    result = classify(
        before=[diag(3, "x undefined"), diag(0, "os unused", code="F401")],
        after=[diag(3, "y undefined"), diag(0, "os unused", code="F401")],
        old_text=OLD,
        new_text=new,
    )
    assert [d.message for d in result.new] == ["y undefined"]
    assert [d.message for d in result.fixed] == ["x undefined"]
    assert [d.message for d in result.preexisting] == ["os unused"]


def test_same_message_on_a_rewritten_line_stays_preexisting() -> None:
    new = "import os\n\ndef f():\n    return x + 1\n"
    result = classify(
        before=[diag(3, "x undefined")], after=[diag(3, "x undefined")], old_text=OLD, new_text=new
    )
    assert result.new == ()
    assert len(result.preexisting) == 1


def test_a_moved_function_keeps_its_diagnostic_by_code_line() -> None:
    old = "def g():\n    pass\n\ndef f():\n    return x\n"
    new = "def f():\n    return x\n\ndef g():\n    pass\n"
    result = classify(
        before=[diag(4, "x undefined")], after=[diag(1, "x undefined")], old_text=old, new_text=new
    )
    assert result.new == ()


def test_a_second_copy_of_an_existing_problem_is_new() -> None:
    old = "a = x\n"
    new = "a = x\nb = x\n"
    result = classify(
        before=[diag(0, "x undefined")],
        after=[diag(0, "x undefined"), diag(1, "x undefined")],
        old_text=old,
        new_text=new,
    )
    assert [d.line for d in result.new] == [1]
    assert [d.line for d in result.preexisting] == [0]


def test_line_map_tracks_unchanged_and_rewritten_lines() -> None:
    mapping = line_map("a\nb\nc\n", "a\nB\nB2\nc\n")
    assert mapping.moved[0] == 0
    assert mapping.moved[2] == 3
    assert mapping.rewritten[1] == (1, 3)
