"""The memory store reads the files again only when something they came from changed."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.context.memory.loader import MemorySpec
from lsp_agent.context.memory.store import MemoryStore


def make(tmp_path: Path, buffers: dict[Path, str]) -> tuple[MemoryStore, Path]:
    project = tmp_path / "proj"
    (project / ".claude" / "rules").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("Use tabs.\n@docs/more.md\n")
    (project / "docs").mkdir()
    (project / "docs" / "more.md").write_text("More.\n")
    spec = MemorySpec(
        cwd=project,
        roots=(project,),
        home=tmp_path / "home",
        managed=tmp_path / "none" / "CLAUDE.md",
        trusted=True,
    )
    return MemoryStore(spec=lambda: spec, overlay=buffers.get), project


def texts(store: MemoryStore) -> str:
    return "\n".join(f.text for f in store.load().files)


def test_unchanged_memory_is_not_read_again_and_every_kind_of_change_is_seen(
    tmp_path: Path,
) -> None:
    buffers: dict[Path, str] = {}
    store, project = make(tmp_path, buffers)
    first = store.load()
    second = store.load()
    assert store.load() is second  # nothing changed: the same load, no new read
    assert [f.text for f in first.files] == [f.text for f in second.files]
    assert "Use tabs." in texts(store) and "More." in texts(store)

    (project / "CLAUDE.md").write_text("Use spaces.\n@docs/more.md\n")
    assert "Use spaces.\n@docs/more.md" in texts(store)
    (project / "docs" / "more.md").write_text("Imported, edited.\n")  # an imported file
    assert "Imported, edited." in texts(store)
    (project / "CLAUDE.local.md").write_text("Local.\n")  # a new file where one may be
    assert "Local." in texts(store)
    nested = project / ".claude" / "rules" / "deep" / "deeper"
    nested.mkdir(parents=True)
    assert store.load() is store.load()
    (nested / "r.md").write_text("A new rule.\n")  # a new rule in a new subfolder
    assert "A new rule." in texts(store)
    buffers[project / "CLAUDE.md"] = "Unsaved.\n"  # the editor's text wins
    assert "Unsaved." in texts(store)
    (project / "CLAUDE.local.md").unlink()
    assert "Local." not in texts(store)
