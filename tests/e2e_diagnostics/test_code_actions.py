"""Agent code actions from any LSP client: offered, resolved, executed, edit applied; and fix
suggestions, including one cancelled by a user edit."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from lsp_agent.lsp.action_prompts import COMMAND_FIX
from lsp_agent.lsp.code_actions import KIND_ASK, KIND_EXPLAIN, KIND_SUGGESTION
from lsp_agent.testing.scenario import expecting, reply, scenario, tool_use

from .conftest import (
    VSCODE_ONLY,
    WAIT_S,
    Editor,
    Launch,
    bridge,
    diagnostics_options,
    lsp_diagnostic,
    track_sessions,
    until,
)

BROKEN = "def total(items):\n    return sum(item.price for item in itemz)\n"
FIXED = "def total(items):\n    return sum(item.price for item in items)\n"
UNDEFINED = lsp_diagnostic(
    1, 38, 43, '"itemz" is not defined', source="Pylance", code="reportUndefinedVariable"
)


async def code_actions(
    editor: Editor,
    uri: str,
    line: int,
    *,
    end: tuple[int, int] | None = None,
    context: list[Any] | None = None,
) -> list[types.CodeAction]:
    end_line, end_character = end or (line, 0)
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(
            start=types.Position(line=line, character=0),
            end=types.Position(line=end_line, character=end_character),
        ),
        context=types.CodeActionContext(diagnostics=context or []),
    )
    raw = await asyncio.wait_for(editor.client.text_document_code_action_async(params), WAIT_S)
    converter = editor.client.protocol._converter
    return [converter.structure(item, types.CodeAction) for item in raw or []]


async def resolve(editor: Editor, action: types.CodeAction) -> types.CodeAction:
    converter = editor.client.protocol._converter
    raw = await asyncio.wait_for(editor.client.code_action_resolve_async(action), WAIT_S)
    resolved: types.CodeAction = converter.structure(raw, types.CodeAction)
    return resolved


async def test_fix_with_agent_runs_a_turn_whose_edit_is_applied(launch: Launch) -> None:
    steps = [
        reply(
            tool_use("Read", {"file_path": "{{root}}/shop.py"}, id="read"),
            expect=expecting(
                last_user_contains=(
                    "Fix this problem in shop.py:\n"
                    "- error at shop.py:2:39 [Pylance reportUndefinedVariable]"
                )
            ),
        ),
        reply(
            tool_use(
                "Edit",
                {
                    "file_path": "{{root}}/shop.py",
                    "old_string": "in itemz)",
                    "new_string": "in items)",
                },
                id="edit",
            )
        ),
        reply("Fixed the undefined name."),
    ]
    editor = await launch(scenario(*steps))
    seen = track_sessions(editor)
    path = editor.root / "shop.py"
    path.write_text(BROKEN)
    doc = editor.open(path)
    bridge(editor, path, 1, UNDEFINED)  # the editor's other language server found it

    actions = await code_actions(editor, doc.uri, 1)
    titles = [a.title for a in actions]
    assert titles == ['Fix with agent: "itemz" is not defined', "Explain with agent"], titles
    fix = actions[0]
    assert fix.kind == types.CodeActionKind.QuickFix
    assert fix.diagnostics and fix.diagnostics[0].source == "Pylance"
    assert actions[1].kind == KIND_EXPLAIN
    if fix.command is None:  # clients that resolve commands lazily (Neovim)
        fix = await resolve(editor, fix)
    assert fix.command is not None and fix.command.command == COMMAND_FIX

    answer = await asyncio.wait_for(
        editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=fix.command.command, arguments=fix.command.arguments)
        ),
        WAIT_S,
    )
    assert answer is not None
    session_id = answer["sessionId"]
    await until(lambda: bool(seen["end"]))
    (start,) = seen["start"]
    assert start == {
        "sessionId": session_id,
        "cwd": str(editor.root),
        "title": 'Fix with agent: shop.py:2 — "itemz" is not defined',
        "origin": COMMAND_FIX,
        "uri": doc.uri,
    }
    (end,) = seen["end"]
    assert (end["sessionId"], end["stopReason"]) == (session_id, "end_turn")
    assert "error" not in end
    # The turn's token counts, summed over its model requests (three here).
    assert end["usage"]["inputTokens"] > 0 and end["usage"]["outputTokens"] > 0
    assert set(end["usage"]) == {
        "inputTokens",
        "outputTokens",
        "cacheReadInputTokens",
        "cacheCreationInputTokens",
    }
    editor.scripted.assert_done()
    assert editor.docs[doc.uri].text == FIXED
    (request,) = editor.permission_requests  # the edit went through the normal review path
    assert request["sessionId"] == session_id
    assert all(u["sessionId"] == session_id for u in editor.updates)


@VSCODE_ONLY
async def test_client_diagnostics_and_selections_get_actions_too(launch: Launch) -> None:
    editor = await launch(scenario(reply("unused")))
    path = editor.root / "shop.py"
    path.write_text(BROKEN)
    doc = editor.open(path)
    given = types.Diagnostic(
        range=types.Range(
            start=types.Position(line=0, character=4), end=types.Position(line=0, character=9)
        ),
        message="bad name",
        source="mypy",
        severity=types.DiagnosticSeverity.Error,
    )
    actions = await code_actions(editor, doc.uri, 0, end=(1, 10), context=[given])
    kinds = [a.kind for a in actions]
    assert kinds == [types.CodeActionKind.QuickFix, KIND_EXPLAIN, KIND_ASK]
    assert actions[2].command is not None
    assert list(actions[2].command.arguments or []) == [
        {"uri": doc.uri, "version": 1, "action": "ask", "startLine": 0, "endLine": 1}
    ]
    none = await code_actions(editor, "file:///nowhere/not-open.py", 0)
    assert none == []


@VSCODE_ONLY
async def test_a_suggestion_is_offered_as_a_preferred_ai_fix_and_applies(launch: Launch) -> None:
    fixed_region = "def total(items):\n    return sum(item.price for item in items)"
    editor = await launch(
        scenario(
            reply(
                f"```python\n{fixed_region}\n```",
                expect=expecting(last_user_contains="corrected text of lines 1-2 only"),
            )
        ),
        init_options=diagnostics_options(
            suggestions={"enabled": True, "delayMs": 0, "minIntervalMs": 0}
        ),
    )
    path = editor.root / "shop.py"
    path.write_text(BROKEN)
    doc = editor.open(path)
    bridge(editor, path, 1, UNDEFINED)

    async def suggested() -> types.CodeAction:
        while True:
            for action in await code_actions(editor, doc.uri, 1):
                if action.kind == KIND_SUGGESTION:
                    return action
            await asyncio.sleep(0.05)

    action = await asyncio.wait_for(suggested(), WAIT_S)
    assert action.is_preferred and action.title.startswith("AI fix (lsp-agent):")
    assert action.edit is not None
    assert editor.docs[doc.uri].text == BROKEN  # offered, never applied by itself
    editor.on_apply_edit(types.ApplyWorkspaceEditParams(edit=action.edit))
    assert editor.docs[doc.uri].text == FIXED
    assert action.command is not None
    await asyncio.wait_for(
        editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=action.command.command, arguments=action.command.arguments
            )
        ),
        WAIT_S,
    )
    assert [a for a in await code_actions(editor, doc.uri, 1) if a.kind == KIND_SUGGESTION] == []
    editor.scripted.assert_done()


@VSCODE_ONLY
async def test_a_user_edit_in_the_region_cancels_the_suggestion(launch: Launch) -> None:
    editor = await launch(
        scenario(
            # The model stalls mid-answer: the user types before it is done.
            reply("```python\nunused\n```", stall_after_events=2, note="cancelled by the user")
        ),
        init_options=diagnostics_options(
            suggestions={"enabled": True, "delayMs": 0, "minIntervalMs": 0}
        ),
    )
    path = editor.root / "shop.py"
    path.write_text(BROKEN)
    doc = editor.open(path)
    bridge(editor, path, 1, UNDEFINED)
    await until(lambda: len(editor.scripted.requests) == 1)  # the fix is being computed
    editor.type_text(path, BROKEN.replace("itemz", "item"))  # the user fixes it differently
    await until(lambda: bool(editor.scripted.disconnects))  # the request was abandoned
    actions = await code_actions(editor, doc.uri, 1)
    assert [a for a in actions if a.kind == KIND_SUGGESTION] == []
