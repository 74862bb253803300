"""Memory files in the editor, under both client presets: diagnostics on the exact ranges (in
the negotiated encoding), document links on imports, hover with the resolved path and token
size, path completion after ``@``, approval of imports from outside the workspace through a
code action, and a code lens on source files naming the memory and rules that apply."""

from __future__ import annotations

import ast
import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types

from lsp_agent.lsp import methods
from lsp_agent.testing.scenario import reply, scenario

from .conftest import WAIT_S, Editor, Launch

MEMORY = (
    "# Project notes\n"
    "\U0001f600 See @docs/guide.md and @missing.md, not `@code.md`.\n"
    "Shared: @../outside.md\n"
    "Type @do\n"
)


def _column(line: str, index: int, encoding: str) -> int:
    prefix = line[:index]
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    if encoding == "utf-16":
        return len(prefix.encode("utf-16-le")) // 2
    return len(prefix)


def _range(editor: Editor, line_no: int, needle: str) -> types.Range:
    line = MEMORY.split("\n")[line_no]
    start = line.index(needle)
    return types.Range(
        start=types.Position(line=line_no, character=_column(line, start, editor.encoding)),
        end=types.Position(
            line=line_no, character=_column(line, start + len(needle), editor.encoding)
        ),
    )


async def _diagnostics(
    editor: Editor, uri: str, ready: object = None
) -> Sequence[types.Diagnostic]:
    async def poll() -> Sequence[types.Diagnostic]:
        while True:
            found = editor.client.diagnostics.get(uri)
            if found is not None and (ready is None or ready(found)):  # type: ignore[operator]
                return found
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(poll(), WAIT_S)


def _commands(actions: Sequence[types.Command | types.CodeAction]) -> list[dict[str, Any]]:
    """The commands of code actions as plain dicts. The client's converter may read a
    ``CodeAction`` as a ``Command`` whose ``command`` is the action's command object printed
    as a Python literal."""
    out: list[dict[str, Any]] = []
    for item in actions:
        if isinstance(item, types.CodeAction):
            if item.command is not None:
                out.append({"command": item.command.command, "arguments": item.command.arguments})
        elif item.command and item.command.startswith("{"):
            out.append(ast.literal_eval(item.command))
    return out


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def test_memory_file_features(launch: Launch, tmp_path: Path) -> None:
    root = tmp_path / "my ws é"
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("The guide. " * 40)
    (tmp_path / "outside.md").write_text("shared team notes")
    memory = root / "CLAUDE.md"
    memory.write_text(MEMORY)
    editor = await launch(scenario(), init_options={"trusted": True})
    doc = editor.open(memory)
    found = await _diagnostics(editor, doc.uri, lambda d: len(d) >= 3)
    assert sorted((d.code, d.range.start.line) for d in found) == [
        ("import-needs-approval", 2),
        ("missing-import", 1),
        ("missing-import", 3),  # "@do", being typed
    ]
    missing = next(d for d in found if d.code == "missing-import")
    assert missing.range == _range(editor, 1, "@missing.md,")
    assert missing.severity == types.DiagnosticSeverity.Warning
    approval = next(d for d in found if d.code == "import-needs-approval")
    assert approval.range == _range(editor, 2, "@../outside.md")
    assert approval.severity == types.DiagnosticSeverity.Information

    links = await editor.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=_doc(doc.uri))
    )
    targets = {link.target: link.range for link in links or []}
    assert targets[(root / "docs" / "guide.md").as_uri()] == _range(editor, 1, "@docs/guide.md")
    assert (tmp_path / "outside.md").as_uri() in targets
    assert len(targets) == 2  # the code span is not an import; the missing file has no link

    where = _range(editor, 1, "@docs/guide.md")
    hover = await editor.client.text_document_hover_async(
        types.HoverParams(
            text_document=_doc(doc.uri),
            position=types.Position(line=1, character=where.start.character + 3),
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert str(root / "docs" / "guide.md") in hover.contents.value
    assert "440 characters, about 110 tokens; loaded" in hover.contents.value

    completion = await editor.client.text_document_completion_async(
        types.CompletionParams(
            text_document=_doc(doc.uri), position=types.Position(line=3, character=8)
        )
    )
    assert completion is not None and not isinstance(completion, list)
    assert "docs/" in [item.label for item in completion.items]

    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=_doc(doc.uri),
            range=approval.range,
            context=types.CodeActionContext(diagnostics=[approval]),
        )
    )
    approve = next(
        c
        for c in _commands(actions or [])
        if c["command"] == methods.COMMAND_APPROVE_IMPORTS
        and c["arguments"][0]["answer"] == "approved"
    )
    res = await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=approve["command"], arguments=approve["arguments"])
    )
    assert res == {"project": str(root), "answer": "approved"}
    after = await _diagnostics(editor, doc.uri, lambda d: len(d) == 2)
    assert [d.code for d in after] == ["missing-import", "missing-import"]


async def test_code_lens_names_the_memory_and_rules_that_apply(
    launch: Launch, tmp_path: Path
) -> None:
    root = tmp_path / "my ws é"
    (root / "CLAUDE.md").write_text("project")
    rules = root / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "py.md").write_text("---\npaths: ['src/**/*.py']\n---\nPython rule")
    (rules / "ts.md").write_text("---\npaths: ['**/*.ts']\n---\nTS rule")
    (root / "src").mkdir()
    source = root / "src" / "a.py"
    source.write_text("x = 1\n")
    editor = await launch(scenario(), init_options={"trusted": True})
    doc = editor.open(source)
    lenses = await editor.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=_doc(doc.uri))
    )
    assert lenses and lenses[0].command is not None
    assert lenses[0].command.title == "lsp-agent: 1 memory file, 1 rule"
    listed = [item["path"] for item in lenses[0].command.arguments or []]
    assert listed == [str(root / "CLAUDE.md"), str(rules / "py.md")]


async def test_untrusted_memory_file_says_why_it_is_not_loaded(
    launch: Launch, tmp_path: Path
) -> None:
    root = tmp_path / "my ws é"
    memory = root / "CLAUDE.md"
    memory.write_text("instructions @docs/guide.md\n")
    editor = await launch(scenario())
    doc = editor.open(memory)
    found = await _diagnostics(editor, doc.uri, lambda d: len(d) >= 1)
    assert [d.code for d in found] == ["untrusted"]
    links = await editor.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=_doc(doc.uri))
    )
    assert not links


async def test_creating_an_import_on_disk_clears_its_diagnostic(
    launch: Launch, tmp_path: Path
) -> None:
    root = tmp_path / "my ws é"
    memory = root / "CLAUDE.md"
    memory.write_text("See @docs/new.md\n")
    editor = await launch(scenario(), init_options={"trusted": True})
    doc = editor.open(memory)
    found = await _diagnostics(editor, doc.uri, lambda d: len(d) == 1)
    assert [d.code for d in found] == ["missing-import"]
    (root / "docs").mkdir()
    target = root / "docs" / "new.md"

    async def cleared() -> None:
        # On disk, no editor event. Written again until seen: the watcher starts armed only
        # shortly after the first diagnostics, and a loaded machine may delay it.
        while editor.client.diagnostics.get(doc.uri):
            target.write_text(f"now it exists {time.monotonic()}\n")
            await asyncio.sleep(0.5)

    await asyncio.wait_for(cleared(), WAIT_S)
    assert list(editor.client.diagnostics[doc.uri]) == []


async def test_memory_command_lists_the_files_in_effect(launch: Launch) -> None:
    editor = await launch(scenario(), init_options={"trusted": True})
    root = editor.root
    (root / "CLAUDE.md").write_text("project notes @docs/guide.md\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("The guide.\n")
    created = await editor.request(methods.SESSION_NEW, {})
    session = created["sessionId"]
    memory = next(c for c in created["availableCommands"] if c["name"] == "memory")
    assert "memory files" in memory["description"]

    result = await editor.prompt(session, "/memory")
    assert result["stopReason"] == "end_turn"
    text = "".join(
        u["update"]["content"]["text"]
        for u in editor.updates
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert "| `CLAUDE.md` | project |" in text
    assert "| `docs/guide.md` | project, imported by `CLAUDE.md` |" in text
    assert editor.scripted.requests == []  # answered without the model


async def test_hash_prompt_adds_a_note_to_the_open_unsaved_memory_buffer(launch: Launch) -> None:
    editor = await launch(scenario(reply("noted")), init_options={"trusted": True})
    memory = editor.root / "CLAUDE.md"
    memory.write_text("# Project\n")
    doc = editor.open(memory)
    editor.type_text(memory, "# Project\nUnsaved line.\n")
    session = await editor.new_session()
    picks = ["project"]  # which memory file: picking it approves the write
    editor.permission = lambda _p: {"outcome": {"outcome": "selected", "optionId": picks.pop(0)}}

    result = await editor.prompt(session, "# Always run the tests")
    assert result["stopReason"] == "end_turn"
    assert len(editor.permission_requests) == 1  # one question: the file
    assert editor.docs[doc.uri].text == "# Project\nUnsaved line.\n- Always run the tests\n"
    assert memory.read_text() == "# Project\n"  # the buffer was edited, not the disk file
    assert editor.scripted.requests == []

    await editor.prompt(session, "hello")
    # The conversation opens with the memory files (the start block), as the buffer holds them.
    opening = json.dumps(editor.scripted.requests[0]["messages"][0]["content"][0])
    assert "Unsaved line." in opening and "- Always run the tests" in opening
