"""Resuming a transcript whose records hold values of the wrong type (a hand edit, another
tool's writer): the session comes back with safe defaults, never with a crash and never with
more reach than the transcript's folder gives it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsp_agent.sessions.resume import resume
from lsp_agent.testing.scenario import reply, scenario
from tests.unit.store.test_resume import Make, ask, managers

__all__ = ["managers"]  # the fixture, shared with the resume tests


def rewrite(path: Path, change: Any) -> None:
    """Apply ``change`` to every record of the transcript at ``path``."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(change(r)) + "\n" for r in records))


async def saved(managers: Make, tmp_path: Path) -> tuple[str, Path]:
    first, _, _ = await managers(scenario(reply("a")))
    session = first.new(cwd=tmp_path)
    await ask(session, "first")
    path = session.recorder.transcript.path
    await first.aclose()
    return session.id, path


async def test_roots_that_are_not_a_list_of_absolute_paths_add_no_folder(
    managers: Make, tmp_path: Path
) -> None:
    session_id, path = await saved(managers, tmp_path)
    # A string is iterated character by character: "/" would become a root of the session.
    for roots in ("/home/me/project", 7, ["relative", "/", 3]):

        def change(record: dict[str, Any], roots: Any = roots) -> dict[str, Any]:
            return record | {"roots": roots} if record["type"] == "meta" else record

        rewrite(path, change)
        manager, _, _ = await managers(scenario())
        session = resume(manager, session_id).session
        expected = (tmp_path, Path("/")) if isinstance(roots, list) else (tmp_path,)
        assert session.roots == expected, roots
        await manager.aclose()


async def test_a_mode_or_model_of_the_wrong_type_is_ignored(managers: Make, tmp_path: Path) -> None:
    session_id, path = await saved(managers, tmp_path)
    bads: tuple[Any, ...] = ([], {"mode": "acceptEdits"}, 7)
    for bad in bads:

        def change(record: dict[str, Any], bad: Any = bad) -> dict[str, Any]:
            if record["type"] == "meta":
                return record | {"mode": bad, "model": bad}
            return record

        rewrite(path, change)
        with path.open("a") as file:
            meta = json.loads(path.read_text().splitlines()[0])
            mode = {**meta, "type": "mode", "uuid": f"m{len(str(bad))}", "mode": bad}
            mode.pop("roots")
            file.write(json.dumps(mode) + "\n")
        manager, _, _ = await managers(scenario())
        session = resume(manager, session_id).session
        assert (session.mode, session.config.model) == ("default", "claude-test"), bad
        await manager.aclose()


async def test_a_line_nested_too_deeply_is_skipped_like_any_broken_line(
    managers: Make, tmp_path: Path
) -> None:
    session_id, path = await saved(managers, tmp_path)
    # The standard JSON parser answers this with RecursionError, not a decoding error.
    with path.open("a") as file:
        file.write("[" * 100_000 + "\n")
    manager, _, _ = await managers(scenario(reply("b")))
    session = resume(manager, session_id).session
    texts = [m.text() for m in session.history]
    assert texts[-2].endswith("first") and texts[-1] == "a"
    await manager.aclose()
