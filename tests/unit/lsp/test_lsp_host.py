"""``LspHost`` on a real pygls server, initialized in process (no transport): what it decides
before anything goes to the editor — which text is the buffer, where a change goes, and which
changes it refuses because their base moved on."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.server import LanguageServer

from lsp_agent.lsp.host import LspHost
from lsp_agent.protocol.documents import FileChange
from lsp_agent.workspace.textfile import read_text_file


@pytest.fixture
def host(tmp_path: Path) -> LspHost:
    server = LanguageServer(name="lsp-agent-test", version="0")
    folder = types.WorkspaceFolder(uri=tmp_path.as_uri(), name="project")
    # pygls' own initialize handler builds the workspace; it is a generator that yields to
    # user handlers (none here).
    for _ in server.protocol.lsp_initialize(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[folder],
        )
    ):
        pass
    return LspHost(server=server)


def open_buffer(host: LspHost, path: Path, text: str, version: int) -> None:
    """What ``textDocument/didOpen`` (and a later ``didChange``) leave in the workspace."""
    item = types.TextDocumentItem(
        uri=path.as_uri(), language_id="plaintext", version=version, text=text
    )
    host.server.workspace.put_text_document(item)
    host.documents.opened(path.as_uri())


def test_an_open_documents_buffer_is_its_unsaved_text(host: LspHost, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("on disk\n")
    open_buffer(host, path, "typed, not saved\n", version=3)
    snapshot = host.buffer(path)
    assert snapshot is not None
    assert (snapshot.text, snapshot.version, snapshot.source) == ("typed, not saved\n", 3, "buffer")
    assert host.buffer(tmp_path / "closed.txt") is None


async def test_a_closed_file_is_written_on_disk_once_and_a_stale_base_is_refused(
    host: LspHost, tmp_path: Path
) -> None:
    path = tmp_path / "closed.txt"
    path.write_text("old\n")
    base = read_text_file(path)
    first = await host.apply_changes(
        [FileChange(path=path, base=base, new_text="new\n")], label="t"
    )
    assert first.applied and path.read_text() == "new\n"
    again = await host.apply_changes(
        [FileChange(path=path, base=base, new_text="clobber\n")], label="t"
    )
    assert not again.applied and "changed on disk" in (again.failure or "")
    assert path.read_text() == "new\n"


async def test_a_buffer_that_moved_on_is_refused_before_the_editor_is_asked(
    host: LspHost, tmp_path: Path
) -> None:
    """No transport is connected: reaching ``workspace/applyEdit`` would fail differently."""
    path = tmp_path / "open.txt"
    path.write_text("saved\n")
    open_buffer(host, path, "read by the agent\n", version=3)
    base = host.buffer(path)
    open_buffer(host, path, "the user typed more\n", version=4)
    result = await host.apply_changes(
        [FileChange(path=path, base=base, new_text="agent's edit\n")], label="t"
    )
    assert not result.applied
    assert "version 3, now 4" in (result.failure or "")
    assert host.server.workspace.get_text_document(path.as_uri()).source == "the user typed more\n"


async def test_one_stale_change_refuses_the_whole_batch(host: LspHost, tmp_path: Path) -> None:
    fresh, stale = tmp_path / "fresh.txt", tmp_path / "stale.txt"
    fresh.write_text("a\n")
    stale.write_text("b\n")
    stale_base = read_text_file(stale)
    stale.write_text("b, edited elsewhere\n")
    result = await host.apply_changes(
        [
            FileChange(path=fresh, base=read_text_file(fresh), new_text="A\n"),
            FileChange(path=stale, base=stale_base, new_text="B\n"),
        ],
        label="t",
    )
    assert not result.applied
    assert (fresh.read_text(), stale.read_text()) == ("a\n", "b, edited elsewhere\n")
