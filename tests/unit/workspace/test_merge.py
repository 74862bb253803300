"""Three-way merge: clean merges keep both sides, overlapping changes become conflicts with
every side's text kept."""

from __future__ import annotations

from lsp_agent.workspace.merge import merge3

BASE = "a\nb\nc\nd\ne\nf\ng\n"


def test_identical_or_one_sided_changes_merge_cleanly() -> None:
    assert merge3(BASE, BASE, BASE).text == BASE
    changed = BASE.replace("c\n", "C\n")
    assert merge3(BASE, changed, BASE).text == changed
    assert merge3(BASE, BASE, changed).text == changed
    assert merge3(BASE, changed, changed).text == changed


def test_non_overlapping_changes_keep_both_sides() -> None:
    ours = BASE.replace("a\n", "A\n")
    theirs = BASE.replace("f\n", "F\n").replace("d\n", "")
    result = merge3(BASE, ours, theirs)
    assert result.clean
    assert result.text == "A\nb\nc\ne\nF\ng\n"


def test_insertions_and_deletions_far_apart_merge() -> None:
    ours = "top\n" + BASE
    theirs = BASE.replace("g\n", "")
    result = merge3(BASE, ours, theirs)
    assert result.clean
    assert result.text == "top\na\nb\nc\nd\ne\nf\n"


def test_overlapping_changes_are_a_conflict_with_both_texts() -> None:
    ours = BASE.replace("c\n", "mine\n")
    theirs = BASE.replace("c\n", "checkpoint\n").replace("g\n", "G\n")
    result = merge3(BASE, ours, theirs, ours_label="yours", theirs_label="checkpoint")
    assert len(result.conflicts) == 1
    conflict = result.conflicts[0]
    assert (conflict.base, conflict.ours, conflict.theirs) == ("c\n", "mine\n", "checkpoint\n")
    lines = result.text.splitlines()
    assert lines[conflict.start_line : conflict.end_line] == [
        "<<<<<<< yours",
        "mine",
        "=======",
        "checkpoint",
        ">>>>>>> checkpoint",
    ]
    assert lines[-1] == "G"  # the clean change elsewhere is still merged


def test_adjacent_changes_conflict_rather_than_guess() -> None:
    ours = BASE.replace("c\n", "C\n")
    theirs = BASE.replace("d\n", "D\n")
    result = merge3(BASE, ours, theirs)
    assert len(result.conflicts) == 1
    assert "C\n" in result.text and "D\n" in result.text


def test_missing_final_newline_and_crlf_are_kept() -> None:
    base = "x\r\ny\r\nz"
    ours = "x\r\ny\r\nz!"
    theirs = "X\r\ny\r\nz"
    assert merge3(base, ours, theirs).text == "X\r\ny\r\nz!"
    conflict = merge3("z", "z1", "z2")
    assert conflict.text == "<<<<<<< ours\nz1\n=======\nz2\n>>>>>>> theirs\n"


def test_empty_base_with_two_different_new_files_conflicts() -> None:
    result = merge3("", "one\n", "two\n")
    assert len(result.conflicts) == 1
    assert "one\n" in result.text and "two\n" in result.text
