"""Reading and writing text files byte-exactly.

Decoding rules (in order): a UTF-8 BOM → ``utf-8`` with ``bom=True``; a UTF-16 BOM →
``utf-16-le``/``utf-16-be`` with ``bom=True``; NUL bytes in the first 8 KiB → binary
(refused); valid UTF-8 → ``utf-8``; anything else → ``latin-1``, which maps every byte to one
code point and so writes back the identical bytes. Line endings are never translated: the text
keeps ``\\r\\n`` where the file has it. Writes go to a temporary file in the same directory and
are renamed over the target (atomic on POSIX), keeping the file's permission bits.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from lsp_agent.permissions.paths import UnsafeWriteError, check_write_path
from lsp_agent.protocol.documents import FileChange, TextSnapshot

MAX_TEXT_BYTES = 10 * 1024 * 1024
"""Files larger than this (bytes) are refused as text."""

_SNIFF_BYTES = 8192


class NotTextError(Exception):
    """The file is binary or too large to handle as text; the message says which."""


class StaleChangeError(Exception):
    """A change's base snapshot no longer matches the file; the message says what moved."""


def decode_bytes(data: bytes) -> tuple[str, str, bool]:
    """Decode file bytes → ``(text, encoding, bom)``; raises :class:`NotTextError` for binary."""
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8) :].decode("utf-8", "surrogateescape"), "utf-8", True
    for bom, codec in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            try:
                return data[2:].decode(codec, "surrogatepass"), codec, True
            except UnicodeDecodeError as exc:
                raise NotTextError(f"not valid {codec.upper()} text ({exc.reason})") from None
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise NotTextError("binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8"), "utf-8", False
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1", False


def encode_text(text: str, *, encoding: str, bom: bool) -> bytes:
    """Encode ``text`` back to bytes the way :func:`decode_bytes` decoded it."""
    errors = "surrogateescape" if encoding == "utf-8" else "surrogatepass"
    if encoding == "latin-1":
        errors = "strict"
    body = text.encode(encoding, errors)
    if not bom:
        return body
    prefix = {
        "utf-8": codecs.BOM_UTF8,
        "utf-16-le": codecs.BOM_UTF16_LE,
        "utf-16-be": codecs.BOM_UTF16_BE,
    }[encoding]
    return prefix + body


def read_text_file(path: Path, *, max_bytes: int = MAX_TEXT_BYTES) -> TextSnapshot:
    """Read ``path`` as a disk :class:`TextSnapshot`.

    Only regular files are read: a named pipe, device or socket would block the caller or never
    end (``/dev/zero``). The file is opened non-blocking and checked with ``fstat`` on the open
    descriptor, so a file swapped for a pipe after a check cannot hang the reader.
    Raises ``FileNotFoundError``, ``IsADirectoryError``, ``PermissionError``, ``OSError`` and
    :class:`NotTextError` (not a regular file, binary, or larger than ``max_bytes`` bytes).
    """
    if os.name != "posix" and path.is_dir():  # POSIX opens a folder; fstat tells below
        raise IsADirectoryError(f"{path} is a directory")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(f"{path} is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise NotTextError(f"{path} is not a regular file (a pipe, device or socket)")
        if info.st_size > max_bytes:
            raise NotTextError(f"file is too large ({info.st_size} bytes; limit {max_bytes} bytes)")
        data = _read_up_to(fd, max_bytes + 1, expected=info.st_size)
    finally:
        os.close(fd)
    return _disk_snapshot(path, data, mtime_ns=info.st_mtime_ns, max_bytes=max_bytes)


def _disk_snapshot(path: Path, data: bytes, *, mtime_ns: int, max_bytes: int) -> TextSnapshot:
    """``data`` (the bytes of ``path`` on disk) as a disk snapshot, under the size limit
    ``max_bytes`` (bytes) and the decoding rules of :func:`decode_bytes`.

    Raises NotTextError: ``data`` is over ``max_bytes`` or does not decode as text."""
    if len(data) > max_bytes:
        raise NotTextError(f"file is too large (over the limit of {max_bytes} bytes)")
    try:
        text, encoding, bom = decode_bytes(data)
    except NotTextError as exc:
        raise NotTextError(f"{path}: {exc}") from None
    return TextSnapshot(
        path=path, text=text, source="disk", encoding=encoding, bom=bom, mtime_ns=mtime_ns
    )


def _read_up_to(fd: int, limit: int, *, expected: int) -> bytes:
    """At most ``limit`` bytes from ``fd`` up to its end, read straight from the descriptor
    (no buffered file object). ``expected`` is the size ``fstat`` gave: the first read asks
    for one byte more, so a file of that size takes one read and one to see its end."""
    chunks: list[bytes] = []
    size = 0
    want = min(limit, expected + 1)
    while size < limit:
        chunk = os.read(fd, max(1, min(limit - size, want)))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        want = 1 << 20  # the file grew since fstat: go on in MiB pieces
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def write_text_atomic(path: Path, text: str, *, encoding: str = "utf-8", bom: bool = False) -> None:
    """Write ``text`` to ``path`` atomically (temp file + rename), creating parent folders.

    Keeps the existing file's permission bits. Raises ``PermissionError`` for an existing file
    that is read-only (no write bit, or not writable by this process: the caller must make it
    writable with the user's approval first), ``OSError`` on other failures, leaving the
    original file untouched. Raises ``UnicodeEncodeError`` if ``text`` cannot be encoded.
    """
    _replace_atomic(path, encode_text(text, encoding=encoding, bom=bom))


def _replace_atomic(path: Path, data: bytes) -> int:
    """Write ``data`` to ``path`` as :func:`write_text_atomic` does; returns the new file's
    modification time (ns), which the rename keeps."""
    mode: int | None = None
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o7777
    if mode is None:
        # Only a new file's folder may be missing (an existing file's folder exists).
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not (mode & 0o222 and os.access(path, os.W_OK)):
        # The rename below needs only the folder's write permission: without this check a
        # read-only file would be replaced where the shell's `>` is refused.
        raise PermissionError(
            errno.EACCES, f"{path} is read-only (mode {mode:04o}); not replacing it", str(path)
        )
    # os.open with 0o666 lets the umask decide a new file's mode, as any editor's save would
    # (mkstemp would make every new file 0600).
    tmp = str(path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            # The file a tool reports written is on disk before it replaces the old one.
            os.fsync(fd)
            info = os.fstat(fd)
        finally:
            os.close(fd)
        if mode is not None and stat.S_IMODE(info.st_mode) != mode:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return info.st_mtime_ns


def apply_change_to_disk(
    change: FileChange, *, current: TextSnapshot | None = None
) -> TextSnapshot:
    """Write one change to disk after checking its base still matches the file.

    ``current`` is the file as the caller read it from disk just before (nothing ran in
    between), so it is not read again; ``None`` reads it here.
    Raises :class:`StaleChangeError` when the file was created, deleted or modified since the
    base was read, or when its path no longer resolves to itself (a directory on the way was
    swapped for a symbolic link since the write was approved: see
    :func:`lsp_agent.permissions.paths.check_write_path`); :class:`NotTextError` when the
    written bytes would not read back as text (NUL bytes, over :data:`MAX_TEXT_BYTES`);
    ``OSError`` when writing fails. Returns the new disk snapshot: the written bytes decoded by
    the rules a read uses (no read back), with the file's modification time.
    """
    path = change.path
    if change.base is None:
        if path.exists():
            raise StaleChangeError(f"{path} already exists; read it before overwriting it")
        encoding, bom = "utf-8", False
    else:
        if current is None:
            try:
                current = read_text_file(path)
            except FileNotFoundError:
                raise StaleChangeError(f"{path} was deleted since it was read") from None
        if current.text != change.base.text:
            raise StaleChangeError(f"{path} changed on disk since it was read; read it again")
        # The disk's codec, not the base's: a base read from an editor buffer knows none.
        encoding, bom = current.encoding, current.bom
    data = encode_text(change.new_text, encoding=encoding, bom=bom)
    guard_write(path)
    mtime_ns = _replace_atomic(path, data)
    # What reading the file back would give (the same size limit and decoding rules), from
    # the bytes just written: a read would cost five system calls and could see someone
    # else's later write as the agent's.
    return _disk_snapshot(path, data, mtime_ns=mtime_ns, max_bytes=MAX_TEXT_BYTES)


def guard_write(path: Path) -> None:
    """Re-check, immediately before writing, that ``path`` (the resolved path the permission
    engine judged) still resolves to itself; raises :class:`StaleChangeError` naming the
    problem otherwise. Closes the time-of-check/time-of-use gap between approval and write."""
    try:
        check_write_path(path)
    except UnsafeWriteError as exc:
        raise StaleChangeError(str(exc)) from None
