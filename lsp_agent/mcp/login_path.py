"""The user's login-shell ``PATH``, for stdio servers started from an editor without it.

An editor launched from a desktop menu inherits the desktop session's minimal ``PATH``, not
the one the user's shell start-up files build (nvm, Homebrew, ``~/.local/bin``...), so
``npx``/``uvx`` servers that work in a terminal are "not found". When a stdio server's command
is not on the ``PATH`` we were given, :class:`LoginPath` asks the user's login shell
(``$SHELL -i -l -c``, as VS Code resolves its shell environment) for its ``PATH`` once,
bounded by a timeout, and caches the answer (also a failure) for the life of the pool; the
command is looked up again on the two joined (ours first). The value is read between markers,
so whatever the start-up files print is ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Mapping

log = logging.getLogger(__name__)

LOGIN_SHELL_TIMEOUT_S = 5.0
"""How long the login shell may take to print its PATH (seconds); then it is killed."""

_START, _END = "__LSP_AGENT_PATH_START__", "__LSP_AGENT_PATH_END__"
_SCRIPT = f'printf "\\n{_START}%s{_END}\\n" "$PATH"'
MAX_OUTPUT_BYTES = 1 << 20
"""Output of the login shell read at most (bytes)."""


def joined_path(ours: str, theirs: str) -> str:
    """``ours`` then the entries of ``theirs`` it lacks (``os.pathsep``-separated)."""
    entries = [p for p in ours.split(os.pathsep) if p]
    entries += [p for p in dict.fromkeys(theirs.split(os.pathsep)) if p and p not in entries]
    return os.pathsep.join(entries)


async def _read_to_end(stream: asyncio.StreamReader, limit: int) -> bytes:
    """What ``stream`` carries until EOF, at most ``limit`` bytes. ``read(limit)`` alone returns
    the first chunk only: a start-up file's banner, or bash's printf writing its leading
    newline on its own, would hide the PATH that follows."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = await stream.read(limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _parse(output: str) -> str | None:
    start = output.rfind(_START)
    end = output.find(_END, start + len(_START)) if start >= 0 else -1
    if start < 0 or end < 0:
        return None
    value = output[start + len(_START) : end].strip()
    return value or None


class LoginPath:
    """The login shell's ``PATH``, resolved at most once (see the module docstring).
    ``environ`` gives ``SHELL`` and the environment the shell starts with; ``timeout_s`` bounds
    the shell."""

    def __init__(
        self, *, environ: Mapping[str, str], timeout_s: float = LOGIN_SHELL_TIMEOUT_S
    ) -> None:
        self.environ = environ
        self.timeout_s = timeout_s
        self._done = False
        self._value: str | None = None
        self._lock = asyncio.Lock()

    async def path(self) -> str | None:
        """The login shell's ``PATH``, or ``None`` when there is no usable shell or it failed
        or timed out (logged once). Never raises."""
        async with self._lock:
            if not self._done:
                self._value = await self._resolve()
                self._done = True
            return self._value

    async def _resolve(self) -> str | None:
        shell = self.environ.get("SHELL", "")
        if not shell or not os.path.isabs(shell) or not os.access(shell, os.X_OK):
            log.info("no login shell to ask for PATH (SHELL=%r)", shell)
            return None
        try:
            proc = await asyncio.create_subprocess_exec(
                shell,
                "-i",
                "-l",
                "-c",
                _SCRIPT,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                env=dict(self.environ),
                start_new_session=True,  # no terminal: an interactive shell cannot grab it
            )
        except OSError as exc:
            log.warning("asking the login shell %s for PATH failed: %s", shell, exc)
            return None
        assert proc.stdout is not None
        try:
            output = await asyncio.wait_for(
                _read_to_end(proc.stdout, MAX_OUTPUT_BYTES), self.timeout_s
            )
            await asyncio.wait_for(proc.wait(), self.timeout_s)
        except TimeoutError:
            log.warning(
                "the login shell %s did not print its PATH within %g s; using ours",
                shell,
                self.timeout_s,
            )
            return None
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                with contextlib.suppress(Exception):
                    await proc.wait()
        value = _parse(output.decode("utf-8", "replace"))
        if value is None:
            log.warning("the login shell %s printed no PATH (exit %s)", shell, proc.returncode)
        else:
            log.info("login shell PATH: %s", value)
        return value
