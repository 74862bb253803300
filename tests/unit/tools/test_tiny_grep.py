"""Grep searches a tiny folder without ignore rules for a literal in-process: the output must
be byte for byte what ripgrep prints with Grep's flags, and anything that could make them
differ must leave the search to ripgrep."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.tools import _rg, _tinygrep
from lsp_agent.tools import grep as grep_module
from lsp_agent.tools._rg import find_rg
from lsp_agent.tools._tinygrep import SAFE_COLUMNS, literal_of, tiny_grep
from lsp_agent.tools._tinylist import TinyListings
from lsp_agent.tools.grep import GrepInput, GrepTool, rg_args

from .conftest import Env, record_rg_runs


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        ("def median", b"def median"),
        ("median\\(", b"median("),
        ("a\\.b\\{1\\}\\\\", b"a.b{1}\\"),
        ("x-y: 'z' = \"w\" <a/> #1 @2 ~3 %4 &5 `6` !7 ;,", None),  # a plain one, checked below
        ("a.b", None),
        ("\\d+", None),
        ("\\bword", None),
        ("x{2}", None),
        ("(?i)x", None),
        ("a|b", None),
        ("é", None),
        ("tab\there", None),
        ("trailing\\", None),
        ("", None),
    ],
)
def test_only_plain_literals_are_taken(pattern: str, literal: bytes | None) -> None:
    if pattern.startswith("x-y"):
        assert literal_of(pattern) == pattern.encode()
    else:
        assert literal_of(pattern) == literal


def build_corpus(root: Path) -> None:
    """Matches on several lines, twice on a line, on the first and a last line without a
    newline, CRLF lines, a hidden file, an empty file, a binary file without the literal,
    a .gitignore (not applied outside a repository), nested folders."""
    files: dict[str, bytes] = {
        "core.py": b"def mean(v):\n    pass\n\n\ndef median(v):\n    return median(v)\n",
        "pkg/report.py": b"from .core import median\nx = median([1]) + median([2])\n",
        "pkg/deep/last.txt": b"first line median(\nmiddle\nlast def median",
        "crlf.txt": b"def median\r\nnothing\r\nmedian(x)\r\n",
        ".hidden/h.py": b"median( hidden\n",
        "empty.txt": b"",
        "data.bin": b"\x00\x01binary without the words\x00",
        "ignored/by-gitignore.py": b"def median_ignored():\n",
        ".gitignore": b"ignored/\n*.txt\n",
        "x-y.txt": b"x-y: 'z' = \"w\" <a/> #1 @2 ~3 %4 &5 `6` !7 ;,\n",
    }
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def rg_output(inp: GrepInput, mode: Any, root: Path) -> list[bytes]:
    argv = [find_rg(), *rg_args(inp, mode, root)]
    run = subprocess.run(argv, cwd=root, capture_output=True, check=False)
    assert run.returncode in (0, 1), run.stderr
    return sorted(run.stdout.splitlines(keepends=True))


def ours(inp: GrepInput, mode: Any, root: Path) -> list[bytes] | None:
    literal = literal_of(inp.pattern)
    assert literal is not None
    out = tiny_grep(
        root,
        literal,
        content=mode == "content",
        line_numbers=inp.line_numbers is not False,
        listings=TinyListings(),
    )
    return None if out is None else sorted(out.splitlines(keepends=True))


@pytest.mark.parametrize(
    "pattern", ["def median", "median\\(", "median", "nowhere", "x-y: 'z' = \"w\" <a/>"]
)
@pytest.mark.parametrize(
    ("mode", "numbers"), [("files_with_matches", None), ("content", True), ("content", False)]
)
def test_the_output_is_ripgreps(
    tmp_path: Path, pattern: str, mode: str, numbers: bool | None
) -> None:
    root = (tmp_path / "tree").resolve()
    build_corpus(root)
    raw: dict[str, Any] = {"pattern": pattern, "output_mode": mode}
    if numbers is not None:
        raw["-n"] = numbers
    inp = GrepInput.model_validate(raw)
    expected = rg_output(inp, mode, root)
    assert ours(inp, mode, root) == expected
    if pattern == "median":
        assert len(expected) > 5


@pytest.mark.parametrize(
    ("relative", "data"),
    [
        ("bin.dat", b"median(\x00rest"),  # binary with the literal: ripgrep's rules decide
        ("bom8.txt", b"\xef\xbb\xbfmedian(\n"),  # ripgrep strips the BOM
        ("long.txt", b"median(" + b"x" * SAFE_COLUMNS + b"\n"),  # ripgrep shortens it
        (".ignore", b"core.py\n"),
        ("sub/.rgignore", b"*\n"),
        (".git/HEAD", b"ref: refs/heads/main\n"),
    ],
)
def test_what_ripgrep_would_treat_otherwise_is_left_to_it(
    tmp_path: Path, relative: str, data: bytes
) -> None:
    root = (tmp_path / "tree").resolve()
    build_corpus(root)
    inp = GrepInput.model_validate({"pattern": "median\\(", "output_mode": "content"})
    assert ours(inp, "content", root) is not None
    (root / relative).parent.mkdir(parents=True, exist_ok=True)
    (root / relative).write_bytes(data)
    assert ours(inp, "content", root) is None


def test_a_utf16_file_is_left_to_ripgrep_even_without_the_literals_bytes(tmp_path: Path) -> None:
    root = (tmp_path / "tree").resolve()
    build_corpus(root)
    (root / "wide.txt").write_bytes("\ufeffdef median\n".encode("utf-16-le"))
    inp = GrepInput.model_validate({"pattern": "def median", "output_mode": "files_with_matches"})
    assert ours(inp, "files_with_matches", root) is None
    # ripgrep transcodes it and finds the literal there: listing it in-process would miss it.
    assert any(line.endswith(b"wide.txt\n") for line in rg_output(inp, "files_with_matches", root))


def test_too_many_bytes_or_too_much_output_is_left_to_ripgrep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = (tmp_path / "tree").resolve()
    build_corpus(root)
    inp = GrepInput.model_validate({"pattern": "median", "output_mode": "content"})
    assert ours(inp, "content", root) is not None
    monkeypatch.setattr(_rg, "TINY_BYTES", 100)
    assert ours(inp, "content", root) is None
    monkeypatch.setattr(_rg, "TINY_BYTES", 1 << 20)
    monkeypatch.setattr(_tinygrep, "MAX_OUTPUT_BYTES", 100)
    assert ours(inp, "content", root) is None


def test_pipes_and_links_are_not_read(tmp_path: Path) -> None:
    root = (tmp_path / "tree").resolve()
    build_corpus(root)
    inp = GrepInput.model_validate({"pattern": "median", "output_mode": "content"})
    os.mkfifo(root / "pipe")  # not listed: only regular files are read
    assert ours(inp, "content", root) is not None
    (root / "gone.txt").symlink_to(root / "missing")  # not listed either
    assert ours(inp, "content", root) is not None


GREP_CASES: list[dict[str, Any]] = [
    {"pattern": "median"},
    {"pattern": "median\\(", "output_mode": "files_with_matches", "head_limit": 2},
    {"pattern": "def median", "output_mode": "content", "-n": True},
    {"pattern": "median", "output_mode": "content", "-n": False, "head_limit": 3},
    {"pattern": "nowhere", "output_mode": "content"},
    {"pattern": "nowhere"},
]


@pytest.mark.parametrize("raw", GREP_CASES)
async def test_grep_answers_as_it_does_with_ripgrep(
    env: Env, raw: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    build_corpus(env.root)
    for index, path in enumerate(sorted(env.root.rglob("*"))):
        if path.is_file():
            os.utime(path, (1_000_000 + index % 3, 1_000_000 + index % 3))  # ties too
    called = record_rg_runs(monkeypatch, grep_module)
    in_process = await env.run(GrepTool(), raw)
    assert called == []
    monkeypatch.setattr(grep_module, "tiny_grep", lambda *args, **kwargs: None)
    with_rg = await env.run(GrepTool(), raw)
    assert len(called) == 1
    assert in_process.text == with_rg.text
    assert in_process.raw_output == with_rg.raw_output


@pytest.mark.parametrize(
    "extra",
    [
        {"-i": True},
        {"glob": "*.py"},
        {"type": "py"},
        {"multiline": True},
        {"output_mode": "count"},
        {"output_mode": "content", "-C": 0},
        {"output_mode": "content", "-A": 1},
    ],
)
async def test_other_flags_run_ripgrep(
    env: Env, extra: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    build_corpus(env.root)
    called = record_rg_runs(monkeypatch, grep_module)
    await env.run(GrepTool(), {"pattern": "median", **extra})
    assert len(called) == 1


def test_a_name_with_a_newline_is_left_to_ripgrep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ripgrep prints such a name as it is; split at its newline, its tail is a relative path
    # that was opened from the process's folder (another file, outside the searched one).
    root = (tmp_path / "tree").resolve()
    build_corpus(root)
    (root / "x").write_bytes(b"median(\n")
    (root / "x\ncore.py").write_bytes(b"nothing\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "core.py").write_bytes(b"median( of a file outside the tree\n")
    monkeypatch.chdir(elsewhere)
    for mode in ("content", "files_with_matches"):
        inp = GrepInput.model_validate({"pattern": "median\\(", "output_mode": mode})
        assert b"core.py\n" not in rg_output(inp, mode, root)
        assert ours(inp, mode, root) is None


class _Listed(TinyListings):
    """The listing made before the tree changed (a file replaced after the walk)."""

    def __init__(self, listed: bytes) -> None:
        super().__init__()
        self._listed = listed

    def listing(self, root: Path) -> bytes | None:
        return self._listed


def _grep_listed(root: Path, listed: bytes) -> bytes | None:
    return tiny_grep(root, b"median(", content=True, line_numbers=True, listings=_Listed(listed))


def test_a_file_replaced_by_a_link_after_the_walk_is_not_followed(tmp_path: Path) -> None:
    root = (tmp_path / "tree").resolve()
    build_corpus(root)
    listed = TinyListings().listing(root)
    assert listed is not None and _grep_listed(root, listed) is not None
    outside = tmp_path / "outside.py"
    outside.write_bytes(b"median( outside the tree\n")
    (root / "empty.txt").unlink()
    (root / "empty.txt").symlink_to(outside)
    # ripgrep does not follow it; reading through it would report a file outside the tree.
    assert _grep_listed(root, listed) is None


def test_a_file_replaced_by_a_pipe_after_the_walk_is_not_waited_on(tmp_path: Path) -> None:
    root = (tmp_path / "tree").resolve()
    build_corpus(root)
    listed = TinyListings().listing(root)
    assert listed is not None
    pipe = root / "empty.txt"
    pipe.unlink()
    os.mkfifo(pipe)
    written: list[bool] = []

    def writer() -> None:
        # Opening a pipe blocks until the other end opens it: a reader that waits for a
        # writer would hang Grep without this one; with it, it reads what is written here.
        with contextlib.suppress(OSError), open(pipe, "wb") as sink:
            sink.write(b"median( through the pipe\n")
            written.append(True)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        assert _grep_listed(root, listed) is None
    finally:
        # Release the writer: a reader held open until it is done lets its open return
        # whenever it gets there (a reader opened and closed at once could come before the
        # writer's open, which would then wait for ever).
        reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
        try:
            thread.join()
        finally:
            os.close(reader)


def test_an_unreadable_file_is_left_to_ripgrep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ripgrep reports it on stderr and exits with 2 after searching the rest: not a known
    # answer. chmod 0 does not stop a superuser: the refusal the kernel would give, by name.
    root = (tmp_path / "tree").resolve()
    build_corpus(root)
    inp = GrepInput.model_validate({"pattern": "nowhere", "output_mode": "files_with_matches"})
    assert ours(inp, "files_with_matches", root) == []
    opener = os.open

    def refusing(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fsdecode(path).endswith("core.py"):
            raise PermissionError(13, "Permission denied", path)
        return opener(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)
    assert ours(inp, "files_with_matches", root) is None
