"""Rebasing a proposal onto the user's newer text: the merge with adjacent changes combined."""

from __future__ import annotations

import random
from pathlib import Path

from lsp_agent.protocol.documents import FileChange, TextSnapshot
from lsp_agent.workspace.merge import merge3
from lsp_agent.workspace.rebase import describe_conflicts, rebase_change

BASE = "".join(f"line {i}\n" for i in range(1, 21))


def split_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _with(text: str, number: int, new: str) -> str:
    lines = split_lines(text)
    lines[number - 1] = new
    return "".join(lines)


def test_changes_to_different_lines_combine() -> None:
    ours = _with(BASE, 11, "agent 11\n")
    theirs = _with(BASE, 3, "user 3\n")
    merged = merge3(BASE, ours, theirs, adjacent="combine")
    assert merged.clean
    assert merged.text == _with(ours, 3, "user 3\n")


def test_user_inserting_lines_above_moves_the_change_down() -> None:
    ours = _with(BASE, 11, "agent 11\n")
    theirs = BASE.replace("line 3\n", "line 3\n# note\n# more\n")
    merged = merge3(BASE, ours, theirs, adjacent="combine")
    assert merged.clean
    assert split_lines(merged.text)[12] == "agent 11\n"
    assert "# note\n# more\n" in merged.text


def test_adjacent_changes_do_not_conflict() -> None:
    ours = _with(BASE, 11, "agent 11\n")
    theirs = _with(BASE, 10, "user 10\n")
    merged = merge3(BASE, ours, theirs, adjacent="combine")
    assert merged.clean
    assert "user 10\nagent 11\n" in merged.text


def test_overlapping_changes_conflict() -> None:
    ours = _with(BASE, 11, "agent 11\n")
    theirs = _with(BASE, 11, "user 11\n")
    merged = merge3(BASE, ours, theirs, adjacent="combine")
    assert not merged.clean
    assert "user 11\n" in merged.text and "agent 11\n" in merged.text
    (conflict,) = merged.conflicts
    assert (conflict.base_start, conflict.base_end) == (10, 11)
    assert (conflict.theirs_start, conflict.theirs_end) == (10, 11)
    assert (conflict.base, conflict.ours, conflict.theirs) == (
        "line 11\n",
        "agent 11\n",
        "user 11\n",
    )
    assert describe_conflicts(merged.conflicts) == "line 11"


def test_conflict_position_is_in_the_newer_text() -> None:
    ours = _with(BASE, 11, "agent 11\n")
    theirs = _with(BASE.replace("line 2\n", "line 2\nnew a\nnew b\n"), 13, "user 11\n")
    merged = merge3(BASE, ours, theirs, adjacent="combine")
    (conflict,) = merged.conflicts
    assert split_lines(theirs)[conflict.theirs_start] == "user 11\n"
    assert describe_conflicts(merged.conflicts) == "line 13"


def test_the_same_change_on_both_sides_is_no_conflict() -> None:
    both = _with(_with(BASE, 11, "same\n"), 2, "x\n")
    theirs = _with(BASE, 11, "same\n")
    merged = merge3(BASE, both, theirs, adjacent="combine")
    assert merged.clean
    assert merged.text == both


def test_two_insertions_at_one_place_conflict() -> None:
    ours = BASE.replace("line 5\n", "line 5\nagent\n")
    theirs = BASE.replace("line 5\n", "line 5\nuser\n")
    assert not merge3(BASE, ours, theirs, adjacent="combine").clean


def test_an_insertion_inside_a_replaced_block_conflicts() -> None:
    ours = BASE.replace("line 5\nline 6\nline 7\n", "block\n")
    theirs = BASE.replace("line 6\n", "line 6\nuser\n")
    merged = merge3(BASE, ours, theirs, adjacent="combine")
    assert not merged.clean
    assert describe_conflicts(merged.conflicts) == "lines 5-8"


def test_crlf_and_missing_final_newline_are_kept() -> None:
    base = "a\r\nb\r\nc\r\nd"
    ours = "a\r\nB\r\nc\r\nd"
    theirs = "a\r\nb\r\nc\r\nD"
    assert merge3(base, ours, theirs, adjacent="combine").text == "a\r\nB\r\nc\r\nD"


def test_random_disjoint_edits_always_combine() -> None:
    rng = random.Random(7)
    for _ in range(200):
        lines = [f"l{i}\n" for i in range(30)]
        base = "".join(lines)
        cut = rng.randrange(2, 28)
        a = rng.randrange(0, cut - 1)
        b = rng.randrange(cut + 1, 30)
        ours_lines, theirs_lines = list(lines), list(lines)
        ours_lines[a] = "ours\n"
        theirs_lines[b : b + 1] = ["theirs\n", "more\n"]
        if rng.random() < 0.5:
            ours_lines, theirs_lines = theirs_lines, ours_lines
        merged = merge3(base, "".join(ours_lines), "".join(theirs_lines), adjacent="combine")
        assert merged.clean
        assert merged.text.count("ours\n") == 1 and merged.text.count("theirs\nmore\n") == 1
        assert len(split_lines(merged.text)) == 31


def _snap(text: str, version: int) -> TextSnapshot:
    return TextSnapshot(path=Path("/p/calc.py"), text=text, version=version, source="buffer")


def test_rebase_change_statuses() -> None:
    base = _snap(BASE, 1)
    change = FileChange(path=base.path, base=base, new_text=_with(BASE, 11, "agent 11\n"))

    same = rebase_change(change, base)
    assert (same.status, same.change) == ("current", change)

    renewed = rebase_change(change, _snap(BASE, 5))
    assert renewed.status == "current"
    assert renewed.change is not None and renewed.change.base == _snap(BASE, 5)

    typed = _snap(_with(BASE, 2, "typed\n"), 7)
    rebased = rebase_change(change, typed)
    assert rebased.status == "rebased" and rebased.change is not None
    assert rebased.change.base == typed
    assert rebased.change.new_text == _with(_with(BASE, 11, "agent 11\n"), 2, "typed\n")

    stale = rebase_change(change, _snap(_with(BASE, 11, "mine\n"), 8))
    assert (stale.status, stale.change) == ("stale", None)
    assert describe_conflicts(stale.conflicts) == "line 11"


def test_a_new_file_is_not_rebased() -> None:
    change = FileChange(path=Path("/p/new.py"), base=None, new_text="x\n")
    assert rebase_change(change, _snap("other\n", 1)).change == change


async def test_workspace_apply_merges_the_users_newer_buffer_text(tmp_path: Path) -> None:
    from lsp_agent.workspace.disk_host import DiskHost
    from lsp_agent.workspace.workspace import Workspace

    path = tmp_path / "calc.py"
    read = TextSnapshot(path=path, text=BASE, version=1, source="buffer")
    host = DiskHost(buffers={path: read})
    workspace = Workspace(host=host, roots=[tmp_path])
    proposal = FileChange(path=path, base=read, new_text=_with(BASE, 11, "agent 11\n"))

    # The user types on line 3 while the proposal waits: it still applies, both kept.
    host.buffers[path] = TextSnapshot(
        path=path, text=_with(BASE, 3, "user 3\n"), version=4, source="buffer"
    )
    result = await workspace.apply([proposal], label="Edit calc.py")
    assert result.applied and result.merged == (path,)
    assert host.buffers[path].text == _with(_with(BASE, 3, "user 3\n"), 11, "agent 11\n")
    assert host.buffers[path].version == 5

    # Typing on the very line the next proposal changes: refused, the user's text stays.
    now = host.buffers[path]
    second = FileChange(path=path, base=now, new_text=_with(now.text, 5, "agent 5\n"))
    host.buffers[path] = TextSnapshot(
        path=path, text=_with(now.text, 5, "user 5\n"), version=9, source="buffer"
    )
    refused = await workspace.apply([second], label="Edit calc.py")
    assert not refused.applied
    assert refused.failure is not None and "changed at line 5" in refused.failure
    assert host.buffers[path].text == _with(now.text, 5, "user 5\n")


def test_proposal_status_in_words() -> None:
    from lsp_agent.lsp.proposals import proposal_status

    ours = _with(BASE, 11, "agent 11\n")
    kwargs = {"path": Path("/p/calc.py"), "label": "calc.py", "base": BASE, "proposal": ours}
    assert proposal_status(**kwargs, current=BASE, version=1).status == "current"
    rebased = proposal_status(**kwargs, current=_with(BASE, 2, "x\n"), version=2)
    assert rebased.status == "rebased" and "still applies" in rebased.message
    stale = proposal_status(**kwargs, current=_with(BASE, 11, "x\n"), version=3)
    assert stale.status == "stale"
    assert [(r.start, r.end) for r in stale.conflicts] == [(11, 11)]
    assert stale.message.startswith("Stale: you changed line 11 of calc.py")
