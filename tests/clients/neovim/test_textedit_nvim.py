"""The door's minimal TextEdit applied by real Neovim (its built-in
``vim.lsp.util.apply_workspace_edit`` on a file opened in a buffer, then ``:write``): the saved
bytes are exactly the new text. Appending at the end of a file must not add a blank line, so no
edit may start or end past the buffer's last line break."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lsp_agent.lsp.textedit import minimal_edit

from .conftest import base_env

SCRIPT = Path(__file__).with_name("apply_edits.lua")

CASES = [
    ("a = 1\r\nb = 2\r\n", "a = 1\r\nb = 2\r\nc = 3\r\n"),  # append to a CRLF file
    ("a = 1\nb = 2\n", "a = 1\nb = 2\nc = 3\n"),  # append to an LF file
    ("a = 1\nb = 2\n", "a = 1\nb = 2\nc = 3\nd = 4\n"),  # append two lines
    ("a = 1\n", "a = 1\n\nc = 3\n"),  # append after a blank line
    ("a = 1\nb = 2\n", "a = 1\nx\nb = 2\n"),  # insert in the middle
    ("a = 1\nb = 2\n", "a = 1\n"),  # delete the last line
    ("a = 1\nb = 2\n", "b = 2\n"),  # delete the first line
    ("a = 1\nb = 2\n", "a = 1\nb = 3\n"),  # change the last line
    ("a = 1\r\nb = 2\r\n", "a = 1\r\nb = 2\r\n\r\nc = 3\r\n"),
]


def test_neovim_applies_minimal_edits_byte_exactly(nvim: Path, tmp_path: Path) -> None:
    payload = []
    for index, (old, new) in enumerate(CASES):
        path = tmp_path / f"case{index}.py"
        path.write_bytes(old.encode())
        edit = minimal_edit(old, new, "utf-16")
        assert edit is not None
        payload.append({"path": str(path), "edits": [json.loads(_edit_json(edit))]})
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(payload))
    proc = subprocess.run(
        [str(nvim), "--clean", "--headless", "-l", str(SCRIPT), str(cases)],
        env=base_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0 and f"applied {len(CASES)}" in output, output
    saved = [(tmp_path / f"case{i}.py").read_bytes() for i in range(len(CASES))]
    assert saved == [new.encode() for _, new in CASES]


def test_no_edit_reaches_past_the_last_line_break() -> None:
    for old, new in CASES:
        edit = minimal_edit(old, new, "utf-16")
        assert edit is not None
        if old.endswith("\n") and new.endswith("\n"):
            lines = old.count("\n")  # the buffer's lines; line `lines` does not exist
            assert edit.range.end.line < lines, (old, new, edit)


def _edit_json(edit: object) -> str:
    from lsprotocol import converters

    return json.dumps(converters.get_converter().unstructure(edit))
