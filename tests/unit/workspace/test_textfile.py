"""Byte-exact decoding and atomic writes."""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

import pytest

from lsp_agent.protocol.documents import FileChange, TextSnapshot
from lsp_agent.workspace.textfile import (
    NotTextError,
    StaleChangeError,
    _read_up_to,
    apply_change_to_disk,
    decode_bytes,
    encode_text,
    read_text_file,
    write_text_atomic,
)

SAMPLES = [
    b"plain\n",
    b"crlf\r\nlines\r\n",
    b"mixed\r\nends\nhere\r",
    codecs.BOM_UTF8 + b"bom \xc3\xa9\n",
    codecs.BOM_UTF16_LE + "utf16 😀\r\n".encode("utf-16-le"),
    codecs.BOM_UTF16_BE + "utf16be\n".encode("utf-16-be"),
    b"latin-1 caf\xe9\n",
    "emoji 😀 and tabs\t\n".encode(),
    b"",
]


@pytest.mark.parametrize("data", SAMPLES)
def test_decode_encode_round_trips_bytes_exactly(data: bytes) -> None:
    text, encoding, bom = decode_bytes(data)
    assert encode_text(text, encoding=encoding, bom=bom) == data


def test_binary_and_broken_utf16_are_not_text() -> None:
    with pytest.raises(NotTextError, match="binary"):
        decode_bytes(b"\x7fELF\x00\x00\x01")
    with pytest.raises(NotTextError, match="UTF-16"):
        decode_bytes(codecs.BOM_UTF16_LE + b"abc")  # odd byte count


def test_too_large_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 2000)
    with pytest.raises(NotTextError, match="too large"):
        read_text_file(path, max_bytes=1000)


def test_new_files_get_the_umask_mode_and_existing_files_keep_theirs(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "sub" / "new.py"
        write_text_atomic(fresh, "x\n")
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        script = tmp_path / "run.sh"
        script.write_text("#!/bin/sh\n")
        script.chmod(0o755)
        write_text_atomic(script, "#!/bin/sh\necho hi\n")
        assert stat.S_IMODE(script.stat().st_mode) == 0o755
    finally:
        os.umask(old)
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["new.py"]  # no temp files left


def test_apply_uses_the_disk_codec_even_for_a_buffer_base(tmp_path: Path) -> None:
    path = tmp_path / "legacy.txt"
    path.write_bytes(b"caf\xe9\r\nend\r\n")
    base = TextSnapshot(path=path, text="caf\xe9\r\nend\r\n", version=3, source="buffer")
    apply_change_to_disk(FileChange(path=path, base=base, new_text="caf\xe9\r\nfin\r\n"))
    assert path.read_bytes() == b"caf\xe9\r\nfin\r\n"


def test_apply_refuses_stale_bases(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    base = read_text_file(path)
    path.write_text("two\n")
    with pytest.raises(StaleChangeError, match="changed on disk"):
        apply_change_to_disk(FileChange(path=path, base=base, new_text="three\n"))
    assert path.read_text() == "two\n"
    with pytest.raises(StaleChangeError, match="already exists"):
        apply_change_to_disk(FileChange(path=path, base=None, new_text="x"))
    path.unlink()
    with pytest.raises(StaleChangeError, match="deleted"):
        apply_change_to_disk(FileChange(path=path, base=base, new_text="x"))


def test_pipes_and_devices_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotTextError, match="not a regular file"):
        read_text_file(fifo)  # would block forever if opened for a plain read
    with pytest.raises(NotTextError, match="not a regular file"):
        read_text_file(Path("/dev/zero"))


def test_a_folder_is_refused_as_a_directory(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError, match="is a directory"):
        read_text_file(tmp_path)


def test_reads_go_to_the_end_or_the_limit_whatever_fstat_said(tmp_path: Path) -> None:
    # The size fstat gave may be stale (the file grew): the reader goes on to the end, and
    # never past the limit.
    path = tmp_path / "grown.txt"
    data = b"0123456789" * 300_000  # 3 MB: more than one piece after the first read
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert _read_up_to(fd, len(data) + 1, expected=10) == data
        os.lseek(fd, 0, os.SEEK_SET)
        assert _read_up_to(fd, 25, expected=10) == data[:25]
        os.lseek(fd, 0, os.SEEK_SET)
        assert _read_up_to(fd, len(data) + 1, expected=len(data)) == data
    finally:
        os.close(fd)
    assert read_text_file(path).text == data.decode()
    with pytest.raises(NotTextError, match="too large"):
        read_text_file(path, max_bytes=len(data) - 1)


async def test_buffers_are_saved_once_per_agent_edit(tmp_path: Path) -> None:
    from lsp_agent.workspace.disk_host import DiskHost
    from lsp_agent.workspace.workspace import Workspace

    path = tmp_path / "a.py"
    path.write_text("old\n")
    buffers = {path: TextSnapshot(path=path, text="old\n", version=1, source="buffer")}
    host = DiskHost(buffers=buffers)
    workspace = Workspace(host=host, roots=(tmp_path,))
    base = workspace.read(path)
    assert (
        await workspace.apply([FileChange(path=path, base=base, new_text="agent\n")], label="edit")
    ).applied
    await workspace.before_disk_read()
    assert path.read_text() == "agent\n"
    # The user now types into the buffer without saving: a later command must not save it.
    buffers[path] = TextSnapshot(path=path, text="agent\nmy wip\n", version=9, source="buffer")
    await workspace.before_disk_read()
    assert path.read_text() == "agent\n"


@pytest.mark.parametrize("old_bytes", SAMPLES)
@pytest.mark.parametrize("added", ["more\n", "\ufeff", "\udce9 escaped\n"])
def test_the_snapshot_after_a_write_is_what_reading_the_file_gives(
    tmp_path: Path, old_bytes: bytes, added: str
) -> None:
    # The snapshot is decoded from the bytes written, not read back: it must not differ, also
    # where the bytes read back in another codec (only a U+FEFF: an empty file with a BOM; an
    # escaped byte that is not UTF-8: latin-1).
    path = tmp_path / "f.txt"
    path.write_bytes(old_bytes)
    base = read_text_file(path)
    new_text = (base.text + added) if base.text else added
    try:
        expected = encode_text(new_text, encoding=base.encoding, bom=base.bom)
    except UnicodeEncodeError:
        return  # this codec cannot hold the added text (the Edit tool refuses it)
    written = apply_change_to_disk(FileChange(path=path, base=base, new_text=new_text))
    assert path.read_bytes() == expected
    assert written == read_text_file(path)


def test_a_write_that_does_not_read_back_as_text_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("x\n")
    change = FileChange(path=path, base=read_text_file(path), new_text="nul \x00 here\n")
    with pytest.raises(NotTextError, match="NUL"):
        apply_change_to_disk(change)
    assert path.read_bytes() == b"nul \x00 here\n"  # written, as a read-back found before


def test_a_read_given_by_the_caller_is_checked_like_its_own(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    base = read_text_file(path)
    path.write_text("two\n")
    moved = read_text_file(path)
    with pytest.raises(StaleChangeError, match="changed on disk"):
        apply_change_to_disk(FileChange(path=path, base=base, new_text="3\n"), current=moved)
    assert path.read_text() == "two\n"
    current = read_text_file(path)
    apply_change_to_disk(FileChange(path=path, base=current, new_text="3\n"), current=current)
    assert path.read_text() == "3\n"
