"""Reads and edits through the LSP door: unsaved buffers, positions, refusals, closed files."""

from __future__ import annotations

from lsprotocol import types

from lsp_agent.testing.scenario import Step, ToolResultExpect, expecting, reply, scenario, tool_use

from .conftest import VSCODE_ONLY, Launch

EXPECTED_ENCODING = {"visual_studio_code": "utf-16", "neovim@v0.11.0": "utf-8"}


def read_then_edit(path: str, old: str, new: str, *, then: ToolResultExpect) -> list[Step]:
    """Steps: Read ``path``, Edit it, then end the turn expecting ``then`` for the edit."""
    return [
        reply(tool_use("Read", {"file_path": path}, id="toolu_read")),
        reply(
            tool_use(
                "Edit", {"file_path": path, "old_string": old, "new_string": new}, id="toolu_edit"
            ),
            expect=expecting(tool_results=[ToolResultExpect(is_error=False)]),
        ),
        reply("Done.", expect=expecting(tool_results=[then])),
    ]


async def test_unsaved_emoji_buffer_is_read_and_edited_in_place(launch: Launch) -> None:
    steps = [
        reply(tool_use("Read", {"file_path": "{{root}}/emoji.py"}, id="toolu_read")),
        reply(
            tool_use(
                "Edit",
                {
                    "file_path": "{{root}}/emoji.py",
                    "old_string": "name = '🎉 old'",
                    "new_string": "name = '🎉 new 🚀'",
                },
                id="toolu_edit",
            ),
            # The model saw the unsaved buffer text, not the disk.
            expect=expecting(tool_results=[ToolResultExpect(is_error=False, contains="hi 😀'")]),
        ),
        reply(
            tool_use("Read", {"file_path": "{{root}}/emoji.py"}, id="toolu_reread"),
            expect=expecting(tool_results=[ToolResultExpect(is_error=False)]),
        ),
        reply(
            "Renamed.",
            expect=expecting(
                tool_results=[ToolResultExpect(is_error=False, contains="name = '🎉 new 🚀'")]
            ),
        ),
    ]
    editor = await launch(scenario(*steps))
    assert editor.encoding == EXPECTED_ENCODING[editor.preset]
    experimental = editor.initialize_result.capabilities.experimental  # type: ignore[attr-defined]
    assert experimental["lspAgent"]["protocolVersion"] == 1

    path = editor.root / "emoji.py"
    disk = b"greeting = 'hi'\nname = 'old'\n"
    path.write_bytes(disk)
    editor.open(path)
    editor.type_text(path, "greeting = 'hi 😀'\nname = '🎉 old'\n")  # never saved

    session = await editor.new_session()
    result = await editor.prompt(session, "rename old to new")

    assert result["stopReason"] == "end_turn", result
    assert set(result["usage"]) == {
        "inputTokens",
        "outputTokens",
        "cacheReadInputTokens",
        "cacheCreationInputTokens",
    }
    editor.scripted.assert_done()
    doc = editor.docs[path.as_uri()]
    assert doc.text == "greeting = 'hi 😀'\nname = '🎉 new 🚀'\n"
    assert path.read_bytes() == disk  # the edit went to the buffer only

    # One edit, minimal, with positions in the negotiated encoding ("name = '🎉 " is 11 UTF-16
    # units, 13 UTF-8 bytes), versioned where the client supports it.
    (params,) = editor.applied_edits
    assert params.label and "emoji.py" in params.label
    if editor.preset == "visual_studio_code":
        (change,) = params.edit.document_changes or []
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.version == 2
        (edit,) = change.edits
    else:
        assert params.edit.document_changes is None
        (edit,) = (params.edit.changes or {})[path.as_uri()]
    assert isinstance(edit, types.TextEdit)
    start = {"utf-16": 11, "utf-8": 13}[editor.encoding]
    assert edit.range == types.Range(
        start=types.Position(line=1, character=start),
        end=types.Position(line=1, character=start + 3),
    )
    assert edit.new_text == "new 🚀"

    # The permission prompt carried the diff and said the buffer holds unsaved changes.
    (request,) = editor.permission_requests
    assert request["sessionId"] == session
    (diff,) = request["toolCall"]["content"]
    assert diff["type"] == "diff" and diff["uri"] == path.as_uri()
    assert "-name = '🎉 old'" in diff["unifiedDiff"]
    assert "+name = '🎉 new 🚀'" in diff["unifiedDiff"]
    assert "emoji.py has unsaved changes in the editor" in request["reason"]
    assert request["_meta"]["unsavedBuffers"] == [path.as_uri()]
    assert {o["kind"] for o in request["options"]} == {
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    }

    # Updates streamed with URIs; the turn showed up as work-done progress.
    kinds = {u["update"]["sessionUpdate"] for u in editor.updates}
    assert {"tool_call", "tool_call_update", "agent_message_chunk"} <= kinds
    locations = [loc for u in editor.updates for loc in u["update"].get("locations", [])]
    assert locations and all(loc["uri"] == path.as_uri() for loc in locations)
    (reports,) = [r for r in editor.client.progress_reports.values() if r]
    assert reports[0].kind == "begin" and reports[0].title == "lsp-agent"
    assert reports[0].cancellable is True
    assert any(r.kind == "report" and "emoji.py" in (r.message or "") for r in reports)
    assert reports[-1].kind == "end" and reports[-1].message == "end_turn"


async def test_rejected_permission_leaves_the_buffer_alone(launch: Launch) -> None:
    rejected = ToolResultExpect(is_error=True, contains="rejected this tool call")
    steps = read_then_edit("{{root}}/a.py", "x = 1", "x = 2", then=rejected)
    # The selection sent with the prompt reaches the model with its 1-based lines.
    steps[0] = steps[0].model_copy(
        update={"expect": expecting(last_user_contains='a.py (lines 1-1)">\nx = 1')}
    )
    editor = await launch(scenario(*steps))
    editor.permission = lambda _p: {
        "outcome": {"outcome": "selected", "optionId": "reject_once", "feedback": "not that"}
    }
    path = editor.root / "a.py"
    path.write_text("x = 1\n")
    editor.open(path)

    selection = {
        "type": "resource",
        "resource": {"uri": path.as_uri(), "text": "x = 1\n", "mimeType": "text/x-python"},
        "_meta": {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}
        },
    }
    result = await editor.prompt(await editor.new_session(), "change x", blocks=[selection])

    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert len(editor.permission_requests) == 1
    assert editor.applied_edits == []
    assert editor.docs[path.as_uri()].text == "x = 1\n"
    assert editor.tool_results()[-1]["is_error"] is True


async def test_closed_file_is_written_on_disk_keeping_crlf(launch: Launch) -> None:
    updated = ToolResultExpect(is_error=False, contains="has been updated")
    editor = await launch(
        scenario(*read_then_edit("{{root}}/win.txt", "b = 2", "b = 3", then=updated))
    )
    path = editor.root / "win.txt"
    path.write_bytes(b"a = 1\r\nb = 2\r\nc = \xc3\xa9\r\n")

    result = await editor.prompt(await editor.new_session(), "bump b")

    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert editor.applied_edits == []  # not open: written on disk
    assert path.read_bytes() == b"a = 1\r\nb = 3\r\nc = \xc3\xa9\r\n"


async def test_typing_elsewhere_while_the_prompt_is_open_is_merged(launch: Launch) -> None:
    merged = ToolResultExpect(is_error=False, contains="changed other lines of this file")
    editor = await launch(
        scenario(*read_then_edit("{{root}}/m.py", "value = 1", "value = 2", then=merged))
    )
    path = editor.root / "m.py"
    path.write_text("value = 1\n\n\ndef f():\n    pass\n")
    editor.open(path)
    typed = "value = 1\n\n\ndef f():\n    return 3  # the user keeps typing\n"

    async def user_types_then_allows(_params: dict[str, object]) -> dict[str, object]:
        editor.type_text(path, typed)
        # The review learns before the answer that the proposal still applies.
        update = await editor.wait_for_update(lambda u: "proposal" in u["update"])
        (status,) = update["update"]["proposal"]
        assert status["status"] == "rebased"
        assert status["uri"] == path.as_uri()
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    editor.permission = user_types_then_allows
    result = await editor.prompt(await editor.new_session(), "set value to 2")

    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert editor.docs[path.as_uri()].text == typed.replace("value = 1", "value = 2")


async def test_overlapping_typing_makes_the_review_stale_and_is_never_clobbered(
    launch: Launch,
) -> None:
    editor = await launch(
        scenario(
            *read_then_edit(
                "{{root}}/m.py",
                "value = 1",
                "value = 2",
                then=ToolResultExpect(is_error=True, contains="changed at line 1"),
            )
        )
    )
    path = editor.root / "m.py"
    path.write_text("value = 1\nother = 0\n")
    editor.open(path)
    typed = "value = 100  # typed meanwhile\nother = 0\n"
    seen: list[dict[str, object]] = []

    async def user_types_then_allows(_params: dict[str, object]) -> dict[str, object]:
        editor.type_text(path, typed)
        update = await editor.wait_for_update(lambda u: "proposal" in u["update"])
        seen.extend(update["update"]["proposal"])
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    editor.permission = user_types_then_allows
    result = await editor.prompt(await editor.new_session(), "set value to 2")

    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    (status,) = seen
    assert status["status"] == "stale"
    assert status["conflicts"] == [{"start": 1, "end": 1}]
    assert "Stale: you changed line 1 of m.py" in str(status["message"])
    assert editor.applied_edits == []
    assert editor.docs[path.as_uri()].text == typed


@VSCODE_ONLY
async def test_edit_the_editor_silently_skipped_is_reported_as_failed(launch: Launch) -> None:
    not_shown = ToolResultExpect(is_error=True, contains="did not hold the edited text")
    editor = await launch(
        scenario(*read_then_edit("{{root}}/s.py", "a = 1", "a = 2", then=not_shown)),
        init_options={"editConfirmTimeoutMs": 300},
    )
    path = editor.root / "s.py"
    path.write_text("a = 1\n")
    editor.open(path)
    editor.skip_edits = True

    result = await editor.prompt(await editor.new_session(), "set a")

    assert result["stopReason"] == "end_turn"
    editor.scripted.assert_done()
    assert len(editor.applied_edits) == 1
    assert editor.docs[path.as_uri()].text == "a = 1\n"


async def test_the_card_shows_what_the_user_accepted_not_the_proposal(launch: Launch) -> None:
    editor = await launch(
        scenario(
            *read_then_edit(
                "{{root}}/h.py",
                "a = 1\nb = 1",
                "a = 2\nb = 2",
                then=ToolResultExpect(is_error=False, contains="changed your proposal"),
            )
        )
    )
    path = editor.root / "h.py"
    path.write_text("a = 1\nb = 1\n")
    editor.open(path)
    accepted = "a = 2\nb = 1\n"  # the user kept hunk 1 only

    def accept_first_line(_params: dict[str, object]) -> dict[str, object]:
        return {
            "outcome": {
                "outcome": "selected",
                "optionId": "allow_once",
                "editedText": {path.as_uri(): accepted},
            }
        }

    editor.permission = accept_first_line
    await editor.prompt(await editor.new_session(), "bump both")

    editor.scripted.assert_done()
    assert editor.docs[path.as_uri()].text == accepted
    final = [
        u["update"]
        for u in editor.updates
        if u["update"].get("toolCallId") == "toolu_edit"
        and u["update"].get("status") == "completed"
    ][-1]
    (diff,) = [c for c in final["content"] if c["type"] == "diff"]
    assert diff["newText"] == accepted
    assert "+b = 2" not in diff["unifiedDiff"] and "+a = 2" in diff["unifiedDiff"]
