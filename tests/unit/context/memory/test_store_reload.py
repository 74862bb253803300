"""The memory store reads the files again only when something they came from changed."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.context.memory.fingerprint import FingerprintPlan, fingerprint
from lsp_agent.context.memory.loader import MemorySpec
from lsp_agent.context.memory.read import no_overlay
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


def test_a_file_consulted_only_by_a_newer_load_is_watched_too(tmp_path: Path) -> None:
    # The stat plan is kept per load: a new import makes a new load, whose plan must
    # include the new file, or edits to it would go unseen.
    store, project = make(tmp_path, {})
    store.load()
    (project / "docs" / "new.md").write_text("First.\n")
    (project / "CLAUDE.md").write_text("Use tabs.\n@docs/more.md\n@docs/new.md\n")
    assert "First." in texts(store)
    assert store.load() is store.load()
    (project / "docs" / "new.md").write_text("Second, longer.\n")
    assert "Second, longer." in texts(store)


def test_the_kept_plan_gives_the_same_fingerprint_as_a_fresh_one(tmp_path: Path) -> None:
    store, project = make(tmp_path, {})
    consulted = store.load().consulted
    assert consulted
    plan = FingerprintPlan.of(consulted)
    assert fingerprint(consulted, no_overlay, plan=plan) == fingerprint(consulted, no_overlay)
    (project / ".claude" / "rules" / "sub").mkdir()
    assert fingerprint(consulted, no_overlay, plan=plan) == fingerprint(consulted, no_overlay)


def test_a_folder_that_gains_an_unrelated_entry_does_not_reload(tmp_path: Path) -> None:
    # A test run's cache in the project and a file in a folder above it change those
    # folders' stats, not the memory: the same load is kept, and a memory file appearing
    # in such a folder still loads.
    store, project = make(tmp_path, {})
    first = store.load()
    (project / ".pytest_cache").mkdir()
    (tmp_path / "scratch.txt").write_text("unrelated\n")
    assert store.load() is first
    (project / "CLAUDE.local.md").write_text("Local.\n")
    assert "Local." in texts(store)
    (tmp_path / "CLAUDE.md").write_text("Above.\n")
    assert "Above." in texts(store)


def test_the_first_load_is_kept_at_the_next_check(tmp_path: Path) -> None:
    # The first load's paths are checked as it is made: the first tool batch reads nothing
    # again, and an edit made after the first load is still seen.
    store, project = make(tmp_path, {})
    first = store.load()
    assert store.load() is first
    (project / "CLAUDE.md").write_text("Use spaces, after the first load.\n")
    assert "Use spaces, after the first load." in texts(store)
