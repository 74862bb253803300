"""The change-set pipeline re-checks a path right before writing it: a directory swapped for a
symbolic link after the change was computed (and approved) makes the write fail, and nothing
is written through the link."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.protocol.documents import FileChange
from lsp_agent.workspace.textfile import StaleChangeError, apply_change_to_disk, read_text_file


def test_a_directory_swapped_for_a_symlink_is_not_written_through(tmp_path: Path) -> None:
    root = (tmp_path / "proj").resolve()
    (root / "src").mkdir(parents=True)
    target = root / "src" / "app.py"
    target.write_text("x = 1\n")
    base = read_text_file(target)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.py").write_text("x = 1\n")  # same text: the base check alone would pass

    (root / "src" / "app.py").unlink()
    (root / "src").rmdir()
    (root / "src").symlink_to(outside, target_is_directory=True)

    with pytest.raises(StaleChangeError, match="resolves to"):
        apply_change_to_disk(FileChange(path=target, base=base, new_text="x = 2\n"))
    assert (outside / "app.py").read_text() == "x = 1\n"


def test_a_new_file_whose_name_became_a_symlink_is_refused(tmp_path: Path) -> None:
    root = (tmp_path / "proj").resolve()
    root.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    target = root / "new.txt"
    target.symlink_to(victim)  # planted after the change was approved
    with pytest.raises(StaleChangeError):
        apply_change_to_disk(FileChange(path=target, base=read_text_file(victim), new_text="x"))
    assert victim.read_text() == "keep\n"


def test_an_unchanged_path_is_written(tmp_path: Path) -> None:
    target = (tmp_path / "ok.txt").resolve()
    snapshot = apply_change_to_disk(FileChange(path=target, base=None, new_text="hello\n"))
    assert snapshot.text == "hello\n"
