"""Verification through the LSP door: managed ruff, the editor bridge, a slow checker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from lsp_agent.testing.scenario import Step, expecting, reply, scenario, tool_use

from .conftest import (
    VSCODE_ONLY,
    Editor,
    Launch,
    bridge,
    checker_server,
    diagnostics_options,
    lsp_diagnostic,
    ruff_server,
    verdicts,
)

SHOP = "def total(items):\n    return sum(item.price for item in items)\n"


def edit(path: str, old: str, new: str, id: str, **expect: Any) -> Step:
    return reply(
        tool_use("Edit", {"file_path": path, "old_string": old, "new_string": new}, id=id),
        expect=expecting(**expect) if expect else None,
    )


def break_and_fix(
    final: str, *, first: str, second: str, path: str = "{{root}}/shop.py"
) -> list[Step]:
    """Read; introduce ``itemz``; fix it; end with ``final``. The model sees ``first`` after
    the breaking edit and ``second`` after the fix."""
    return [
        reply(tool_use("Read", {"file_path": path}, id="read")),
        edit(path, "in items)", "in itemz)", "break"),
        edit(path, "in itemz)", "in items)", "fix", last_user_contains=first),
        reply(final, expect=expecting(last_user_contains=second)),
    ]


async def test_ruff_verdicts_belong_to_the_exact_versions_the_agent_wrote(launch: Launch) -> None:
    steps = break_and_fix(
        "Fixed: ruff reports no new problems for the version I wrote.",
        first="NEW error shop.py:2:39 [Ruff F821] Undefined name `itemz`",
        second="fixed: Ruff F821",
    )
    editor = await launch(
        scenario(*steps),
        init_options=diagnostics_options(servers=[ruff_server()], verify={"timeoutMs": 10_000}),
    )
    path = editor.root / "shop.py"
    path.write_text(SHOP)
    editor.open(path)
    session = await editor.new_session()
    result = await editor.prompt(session, "break it, then fix it")
    assert result["stopReason"] == "end_turn", result
    editor.scripted.assert_done()

    broken, fixed = verdicts(editor)
    doc = editor.docs[path.as_uri()]
    # Each verdict names the editor version the agent's edit produced, and was computed for it.
    assert (
        [broken["files"][0]["version"], fixed["files"][0]["version"]] == [2, 3] == [2, doc.version]
    )
    assert broken["complete"] and broken["newErrors"] == 1
    assert [d["code"] for d in broken["files"][0]["new"]] == ["F821"]
    assert fixed["complete"] and fixed["newErrors"] == 0
    assert [d["code"] for d in fixed["files"][0]["fixed"]] == ["F821"]
    titles = [u["update"].get("title") for u in editor.updates if u["update"].get("rawOutput")]
    assert "Diagnostics: 1 new error in shop.py" in titles


@VSCODE_ONLY
async def test_bridged_diagnostics_are_used_per_version_and_stale_ones_ignored(
    launch: Launch,
) -> None:
    steps = break_and_fix(
        "Fixed.",
        first='NEW error shop.py:2:39 [Pylance reportUndefinedVariable] "itemz" is not defined',
        second="fixed: Pylance reportUndefinedVariable",
    )
    editor = await launch(
        scenario(*steps), init_options=diagnostics_options(verify={"timeoutMs": 10_000})
    )
    path = editor.root / "shop.py"
    path.write_text(SHOP)
    doc = editor.open(path)
    style = lsp_diagnostic(
        0, 4, 9, "Function name could be better", source="Pylance", code="style", severity=2
    )
    bridge(editor, path, 1, style)
    original = editor.on_apply_edit

    def apply_and_report(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        answer = original(params)
        undefined = lsp_diagnostic(
            1, 38, 43, '"itemz" is not defined', source="Pylance", code="reportUndefinedVariable"
        )
        if "itemz" in doc.text:
            bridge(editor, path, doc.version, style, undefined)
        else:
            bridge(editor, path, doc.version, style)
            # A late report for the previous version must never count for this one.
            bridge(editor, path, doc.version - 1, style, undefined)
        return answer

    editor.on_apply_edit = apply_and_report  # type: ignore[method-assign]
    session = await editor.new_session()
    result = await editor.prompt(session, "break it, then fix it")
    assert result["stopReason"] == "end_turn", result
    editor.scripted.assert_done()
    broken, fixed = verdicts(editor)
    assert broken["files"][0]["sources"] == [{"name": "editor", "status": "checked"}]
    assert broken["files"][0]["preexisting"] == 1
    assert fixed["newErrors"] == 0 and fixed["files"][0]["preexisting"] == 1


@VSCODE_ONLY
async def test_a_silent_editor_source_is_unknown_not_clean(launch: Launch) -> None:
    steps = [
        reply(tool_use("Read", {"file_path": "{{root}}/shop.py"}, id="read")),
        edit("{{root}}/shop.py", "in items)", "in itemz)", "break"),
        reply(
            "I could not verify this change.",
            expect=expecting(
                last_user_contains="unknown: editor did not report on this version within 300 ms"
            ),
        ),
    ]
    editor = await launch(
        scenario(*steps), init_options=diagnostics_options(verify={"timeoutMs": 300})
    )
    path = editor.root / "shop.py"
    path.write_text(SHOP)
    editor.open(path)
    bridge(editor, path, 1)  # the editor has a diagnostics source for this file (clean so far)
    session = await editor.new_session()
    await editor.prompt(session, "break it")
    editor.scripted.assert_done()
    # The verdict after the edit, and the end-of-turn re-check: never "clean".
    found = verdicts(editor)
    assert len(found) == 2
    assert all(v["complete"] is False and v["newErrors"] == 0 for v in found)


@VSCODE_ONLY
async def test_a_slow_checker_never_yields_a_stale_verdict(launch: Launch) -> None:
    steps = [
        reply(tool_use("Read", {"file_path": "{{root}}/notes.txt"}, id="read")),
        edit("{{root}}/notes.txt", "ERROR here", "fine here", "fix"),
        reply("Done.", expect=expecting(last_user_contains="unknown: checker did not report")),
    ]
    editor = await launch(
        scenario(*steps),
        init_options=diagnostics_options(
            servers=[checker_server("--delay-ms", "1500")], verify={"timeoutMs": 500}
        ),
    )
    path = editor.root / "notes.txt"
    path.write_text("ok\nERROR here\n")
    session = await editor.new_session()
    await editor.prompt(session, "fix the error")
    editor.scripted.assert_done()
    assert path.read_text() == "ok\nfine here\n"
    first, *rechecks = verdicts(editor)
    assert first["files"][0]["sources"][0]["status"] == "unknown"
    assert first["files"][0]["new"] == [] and first["files"][0]["fixed"] == []
    for verdict in rechecks:  # the end-of-turn re-check: unknown, or right about the new text
        (source,) = verdict["files"][0]["sources"]
        assert source["status"] == "unknown" or verdict["files"][0]["new"] == []


def _write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.write_text(text)
    return path


@VSCODE_ONLY
async def test_bad_bridge_input_is_ignored_and_the_server_stays_up(launch: Launch) -> None:
    editor: Editor = await launch(scenario(reply("ok")))
    path = _write(editor.root, "a.py", "x = 1\n")
    editor.open(path)
    notify = editor.client.protocol.notify
    notify("lspAgent/diagnostics/didChange", {"uri": path.as_uri()})  # no diagnostics
    notify(
        "lspAgent/diagnostics/didChange",
        {"uri": "untitled:Untitled-1", "version": 1, "diagnostics": []},
    )
    far = lsp_diagnostic(99, 0, 5, "past the end", source="x", code="y")
    bridge(editor, path, 1, far, {"range": "nonsense"})
    bridge(editor, path, 0, far)  # older than the buffer
    session = await editor.new_session()
    result = await editor.prompt(session, "still there?")
    assert result["stopReason"] == "end_turn"
    logged = [m.message for m in editor.client.log_messages]
    assert any("ignored lspAgent/diagnostics/didChange" in m for m in logged), logged
    assert any("untitled:Untitled-1: not a file URI" in m for m in logged), logged
    assert any("skipped 1 malformed" in m for m in logged), logged
