"""A language server the agent runs itself, as an LSP client.

:class:`ManagedServer` starts the configured command lazily (on first use), keeps an overlay of
the documents it was given (``didOpen``/``didChange`` with full text, its own version counter
per document), and turns its diagnostics into store reports tagged with the digest of the text
they were computed for:

* pull (``textDocument/diagnostic``) when the server offers it: the answer belongs to the text
  synced before the request, unless the text changed while the request was in flight (then it
  is dropped);
* push (``textDocument/publishDiagnostics``): a report naming a version is mapped to the text
  sent under that version; a report naming none is attributed only when that is unambiguous
  (exactly one text was in flight), else dropped (see ``ManagedServer._attribute``).

Failure handling: a command that cannot start, an ``initialize`` that errors or exceeds
``startTimeoutMs``, a crash, a stream that breaks the protocol, or three request timeouts in a
row put the server in ``crashed`` state; the next use restarts it after a backoff (0.5 s,
doubling, at most 30 s), at most ``maxRestarts`` times, then it stays ``failed``. Every wait is
bounded. :meth:`ManagedServer.shutdown` sends ``shutdown``/``exit`` and kills the process group
if it does not leave in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import hashlib
import logging
import os
import signal
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lsp_agent.diagnostics.client_side import answer_server_request, initialize_params
from lsp_agent.diagnostics.config import ManagedServerConfig
from lsp_agent.diagnostics.jsonrpc import (
    ConnectionClosedError,
    JsonRpcConnection,
    ResponseError,
    RpcError,
)
from lsp_agent.diagnostics.model import Report, parse_diagnostics
from lsp_agent.diagnostics.positions import PositionEncoding, split_lines
from lsp_agent.diagnostics.store import DiagnosticsStore
from lsp_agent.diagnostics.uris import path_to_uri

logger = logging.getLogger(__name__)

ServerState = Literal["stopped", "starting", "running", "crashed", "failed", "closed"]

BACKOFF_START_S = 0.5
BACKOFF_MAX_S = 30.0
MAX_CONSECUTIVE_TIMEOUTS = 3
STDERR_LINES = 40
SERVER_CANCELLED = -32802
"""LSP ``ServerCancelled``: the server dropped a request (e.g. the document changed)."""

_VERSIONS_KEPT = 4


def text_digest(text: str) -> str:
    """SHA-256 (hex) of ``text`` as ``TextSnapshot.digest`` computes it."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ServerUnavailableError(Exception):
    """The managed server cannot serve now. The message says why as a predicate to follow the
    server's name ("could not start: command not found: ruff"), for the model and the user."""


@dataclass(kw_only=True)
class _Version:
    version: int
    digest: str
    text: str
    sent: float


@dataclass(kw_only=True)
class _Document:
    uri: str
    versions: deque[_Version] = field(default_factory=lambda: deque(maxlen=_VERSIONS_KEPT))
    unreported: int = 0
    """Texts sent since the last pushed report (to attribute reports that name no version)."""
    covered: int | None = None
    """The version the last attributed report was for."""

    @property
    def current(self) -> _Version:
        return self.versions[-1]


class ManagedServer:
    """One configured language server; see the module docstring. Event-loop only.

    ``roots`` are the workspace folders announced at ``initialize``; ``store`` receives its
    diagnostics under the channel ``config.name``; ``max_per_report`` caps a report.
    """

    def __init__(
        self,
        *,
        config: ManagedServerConfig,
        roots: Sequence[Path],
        store: DiagnosticsStore,
        max_per_report: int = 500,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.roots = tuple(roots)
        self.store = store
        self.max_per_report = max_per_report
        self._clock = clock
        self.state: ServerState = "stopped"
        self.last_error: str | None = None
        self.capabilities: dict[str, Any] = {}
        self.encoding: PositionEncoding = "utf-16"
        self.pull = False
        self.failures = 0
        self.started_at: float | None = None
        self._retry_at = 0.0
        self._timeouts = 0
        self._process: asyncio.subprocess.Process | None = None
        self._connection: JsonRpcConnection | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._start_task: asyncio.Task[None] | None = None
        self._docs: OrderedDict[Path, _Document] = OrderedDict()
        self._by_uri: dict[str, Path] = {}
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.ignored_reports = 0

    @property
    def name(self) -> str:
        """The configured name (the store channel)."""
        return self.config.name

    def handles(self, path: Path) -> bool:
        """Whether the file name of ``path`` matches one of the configured globs."""
        return any(fnmatch.fnmatchcase(path.name, glob) for glob in self.config.filetypes)

    # ---- lifecycle -----------------------------------------------------------------------------

    async def ensure_running(self, *, timeout: float) -> JsonRpcConnection:
        """The live connection, starting the server if needed (waiting at most ``timeout``
        seconds; a start that takes longer goes on in the background).

        Raises :class:`ServerUnavailableError` with the reason (closed, given up, backing off after
        a crash, still starting, failed to start).
        """
        if self.state == "running" and self._connection is not None:
            return self._connection
        if self.state == "closed":
            raise ServerUnavailableError("was shut down")
        if self.state == "failed":
            raise ServerUnavailableError(
                f"is disabled after {self.failures} failed starts or crashes "
                f"(last: {self.last_error})"
            )
        if self._start_task is None:
            wait = self._retry_at - self._clock()
            if self.state == "crashed" and wait > 0:
                raise ServerUnavailableError(
                    f"could not start or crashed ({self.last_error}); next try in {wait:.1f} s"
                )
            self._start_task = asyncio.ensure_future(self._start())
        task = self._start_task
        try:
            async with asyncio.timeout(max(timeout, 0)):
                await asyncio.shield(task)
        except TimeoutError:
            raise ServerUnavailableError("is still starting") from None
        except ServerUnavailableError:
            raise
        if self.state != "running" or self._connection is None:
            raise ServerUnavailableError(f"could not start: {self.last_error}")
        return self._connection

    async def _start(self) -> None:
        self.state = "starting"
        self._docs.clear()
        self._by_uri.clear()
        try:
            await self._spawn_and_initialize()
        except asyncio.CancelledError:
            self._kill()
            raise
        except Exception as exc:
            self._kill()
            if isinstance(exc, ConnectionClosedError):
                # Let the exit watcher and stderr drain catch up, for a useful message.
                await asyncio.sleep(0.05)
            self._failed(_describe(exc) + self._stderr_tail())
        finally:
            self._start_task = None

    async def _spawn_and_initialize(self) -> None:
        cwd = self.roots[0] if self.roots else Path.cwd()
        env = {**os.environ, **self.config.env}
        try:
            process = await asyncio.create_subprocess_exec(
                *self.config.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=sys.platform != "win32",
            )
        except FileNotFoundError:
            raise ServerUnavailableError(f"command not found: {self.config.command[0]}") from None
        except OSError as exc:
            raise ServerUnavailableError(f"cannot run {self.config.command[0]}: {exc}") from None
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        connection = JsonRpcConnection(
            reader=process.stdout,
            writer=process.stdin,
            on_notification=self._on_notification,
            on_request=self._on_request,
            name=self.name,
        )
        self._connection = connection
        self._spawn(connection.run())
        if process.stderr is not None:
            self._spawn(self._drain_stderr(process.stderr))
        self._spawn(self._watch_exit(process, connection))
        timeout = self.config.start_timeout_ms / 1000
        try:
            result = await connection.request(
                "initialize",
                initialize_params(self.roots, self.config.initialization_options),
                timeout=timeout,
            )
        except TimeoutError:
            raise ServerUnavailableError(
                f"no answer to initialize within {self.config.start_timeout_ms} ms"
            ) from None
        capabilities = result.get("capabilities") if isinstance(result, dict) else None
        self.capabilities = capabilities if isinstance(capabilities, dict) else {}
        encoding = self.capabilities.get("positionEncoding", "utf-16")
        self.encoding = encoding if encoding in ("utf-8", "utf-16", "utf-32") else "utf-16"
        mode = self.config.diagnostics
        self.pull = mode == "pull" or (
            mode == "auto" and bool(self.capabilities.get("diagnosticProvider"))
        )
        connection.notify("initialized", {})
        self.state = "running"
        self.started_at = self._clock()
        self._timeouts = 0
        logger.info(
            "%s started (pid %s, %s positions, %s diagnostics)",
            self.name,
            process.pid,
            self.encoding,
            "pull" if self.pull else "push",
        )

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        with contextlib.suppress(Exception):
            while True:
                line = await stream.readline()
                if not line:
                    return
                text = line.decode("utf-8", "replace").rstrip()
                self.stderr.append(text[:500])
                logger.debug("%s stderr: %s", self.name, text)

    async def _watch_exit(
        self, process: asyncio.subprocess.Process, connection: JsonRpcConnection
    ) -> None:
        code = await process.wait()
        connection.close(f"exited with code {code}")
        # During a start, the failed initialize reports the exit (see _start).
        if self._process is process and self.state == "running":
            self._failed(f"exited with code {code}{self._stderr_tail()}")

    def _stderr_tail(self) -> str:
        return f"; stderr: {self.stderr[-1]}" if self.stderr else ""

    def _failed(self, reason: str) -> None:
        self.failures += 1
        self.last_error = reason
        self._connection = None
        self._docs.clear()
        self._by_uri.clear()
        if self.failures > self.config.max_restarts:
            self.state = "failed"
            logger.warning(
                "%s failed (%s); giving up after %d tries", self.name, reason, self.failures
            )
            return
        self.state = "crashed"
        backoff = min(BACKOFF_START_S * 2 ** (self.failures - 1), BACKOFF_MAX_S)
        self._retry_at = self._clock() + backoff
        logger.warning("%s failed (%s); retrying in %.1f s", self.name, reason, backoff)

    def _kill(self) -> None:
        process = self._process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if sys.platform != "win32":
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()

    async def restart(self) -> None:
        """Kill the process (if any) and forget the failure count; the next use starts it."""
        await self._stop(graceful=False)
        self.state = "stopped"
        self.failures = 0
        self.last_error = None

    async def shutdown(self, *, timeout: float = 2.0) -> None:
        """Stop for good: ``shutdown`` + ``exit`` (each bounded by ``timeout`` seconds), then
        kill the process group if it is still there."""
        await self._stop(graceful=True, timeout=timeout)
        self.state = "closed"

    async def _stop(self, *, graceful: bool, timeout: float = 2.0) -> None:
        start = self._start_task
        if start is not None:
            start.cancel()
            await asyncio.gather(start, return_exceptions=True)
        process, connection = self._process, self._connection
        self.state = "stopped"
        self._connection = None
        if process is not None and process.returncode is None:
            if graceful and connection is not None and connection.closed is None:
                with contextlib.suppress(RpcError, TimeoutError):
                    await connection.request("shutdown", None, timeout=timeout)
                    connection.notify("exit")
            try:
                async with asyncio.timeout(timeout if graceful else 0.01):
                    await process.wait()
            except TimeoutError:
                self._kill()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await process.wait()
        if connection is not None:
            connection.close("stopped")
        self._process = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._docs.clear()
        self._by_uri.clear()

    # ---- documents -----------------------------------------------------------------------------

    def synced_digest(self, path: Path) -> str | None:
        """The digest of the text this server currently has for ``path`` (``None``: closed)."""
        doc = self._docs.get(path)
        return doc.current.digest if doc is not None else None

    def synced_since(self, path: Path) -> float | None:
        """When the current text of ``path`` was sent (monotonic seconds)."""
        doc = self._docs.get(path)
        return doc.current.sent if doc is not None else None

    def sync(self, path: Path, text: str) -> int:
        """Make the server's text of ``path`` equal ``text`` (``didOpen``, or ``didChange`` with
        the full text); returns the version it has. Needs a running server (see
        :meth:`ensure_running`); raises :class:`ServerUnavailableError` otherwise."""
        connection = self._connection
        if self.state != "running" or connection is None:
            raise ServerUnavailableError("is not running")
        digest = text_digest(text)
        doc = self._docs.get(path)
        try:
            if doc is None:
                uri = path_to_uri(path)
                doc = _Document(uri=uri)
                doc.versions.append(
                    _Version(version=1, digest=digest, text=text, sent=self._clock())
                )
                doc.unreported = 1
                self._docs[path] = doc
                self._by_uri[uri] = path
                connection.notify(
                    "textDocument/didOpen",
                    {
                        "textDocument": {
                            "uri": uri,
                            "languageId": self.config.language_id,
                            "version": 1,
                            "text": text,
                        }
                    },
                )
                self._evict()
            elif doc.current.digest != digest:
                version = doc.current.version + 1
                doc.versions.append(
                    _Version(version=version, digest=digest, text=text, sent=self._clock())
                )
                doc.unreported += 1
                connection.notify(
                    "textDocument/didChange",
                    {
                        "textDocument": {"uri": doc.uri, "version": version},
                        "contentChanges": [{"text": text}],
                    },
                )
            self._docs.move_to_end(path)
        except RpcError as exc:
            raise ServerUnavailableError(f"failed: {exc}") from None
        return doc.current.version

    def close_document(self, path: Path) -> None:
        """Send ``didClose`` for ``path`` if it is open here."""
        doc = self._docs.pop(path, None)
        if doc is None:
            return
        self._by_uri.pop(doc.uri, None)
        if self._connection is not None and self.state == "running":
            with contextlib.suppress(RpcError):
                self._connection.notify("textDocument/didClose", {"textDocument": {"uri": doc.uri}})

    def _evict(self) -> None:
        while len(self._docs) > self.config.max_open_documents:
            oldest = next(iter(self._docs))
            self.close_document(oldest)

    def document_text(self, path: Path) -> str | None:
        """The text this server has for ``path``."""
        doc = self._docs.get(path)
        return doc.current.text if doc is not None else None

    # ---- diagnostics ---------------------------------------------------------------------------

    async def analyze(self, path: Path, text: str, *, timeout: float) -> None:
        """Have the server check ``text`` as the content of ``path``; its report lands in the
        store (see the module docstring). Pull servers are asked and answered here; push servers
        are only given the text (wait on the store). Raises :class:`ServerUnavailableError`
        or ``TimeoutError`` (``timeout`` in seconds, for the whole call)."""
        deadline = self._clock() + timeout
        await self.ensure_running(timeout=timeout)
        self.sync(path, text)
        if not self.pull:
            return
        for _attempt in range(3):
            doc = self._docs.get(path)
            if doc is None or doc.current.digest != text_digest(text):
                return  # someone synced another text meanwhile; nothing to pull for ours
            sent = doc.current
            try:
                result = await self.request(
                    "textDocument/diagnostic",
                    {"textDocument": {"uri": doc.uri}},
                    timeout=max(deadline - self._clock(), 0.0),
                )
            except ResponseError as exc:
                if exc.code == SERVER_CANCELLED:
                    continue
                if exc.code == -32601:
                    logger.info("%s has no pull diagnostics; waiting for pushes", self.name)
                    self.pull = False
                    return
                raise ServerUnavailableError(f"failed: {exc}") from None
            current = self._docs.get(path)
            if current is None or current.current.version != sent.version:
                continue  # the text changed while the server worked: the answer is ambiguous
            self._store_pull(path, sent, result)
            return

    def _store_pull(self, path: Path, sent: _Version, result: Any) -> None:
        items = result.get("items") if isinstance(result, dict) else None
        self._store(path, sent, items, final=True)

    def _store(self, path: Path, version: _Version, items: Any, *, final: bool) -> None:
        """Parse one report's diagnostics against the text they were computed for and keep
        them, counting the ones dropped past ``max_per_report``."""
        items = items if isinstance(items, list) else []
        diagnostics, truncated, invalid = parse_diagnostics(
            items[: self.max_per_report * 4],
            lines=split_lines(version.text),
            encoding=self.encoding,
            default_source=self.name,
            limit=self.max_per_report,
        )
        self.store.put(
            Report(
                path=path,
                channel=self.name,
                diagnostics=diagnostics,
                version=version.version,
                digest=version.digest,
                received=self._clock(),
                final=final,
                truncated=truncated + max(0, len(items) - self.max_per_report * 4),
                invalid=invalid,
            )
        )

    def _on_notification(self, method: str, params: Any) -> None:
        if method == "textDocument/publishDiagnostics":
            self._on_publish(params)
        elif method == "window/logMessage" and isinstance(params, dict):
            logger.debug("%s: %s", self.name, str(params.get("message", ""))[:500])

    def _on_publish(self, params: Any) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("uri"), str):
            self.ignored_reports += 1
            return
        path = self._by_uri.get(params["uri"])
        doc = self._docs.get(path) if path is not None else None
        if path is None or doc is None:
            # A file we never opened (workspace-wide analysis) or already closed.
            self.ignored_reports += 1
            return
        version = params.get("version")
        match: _Version | None
        if isinstance(version, int) and not isinstance(version, bool):
            match = next((v for v in doc.versions if v.version == version), None)
            if match is None:
                self.ignored_reports += 1
                logger.debug(
                    "%s: diagnostics for forgotten version %s of %s", self.name, version, path
                )
                return
        else:
            match = self._attribute(doc)
        if match is None:
            self.ignored_reports += 1
            logger.debug(
                "%s: diagnostics for %s without a version could not be attributed", self.name, path
            )
            return
        doc.unreported = 0
        doc.covered = match.version
        self._store(path, match, params.get("diagnostics"), final=False)

    @staticmethod
    def _attribute(doc: _Document) -> _Version | None:
        """The text a report without a version belongs to, when that is unambiguous: the only
        text sent since the previous report, or (no text sent since) the text that report was
        for. With two or more texts in flight the report may be about any of them: it is
        dropped, and the newest text counts as the one still awaited."""
        if doc.unreported == 1 or (doc.unreported == 0 and doc.covered == doc.current.version):
            return doc.current
        if doc.unreported >= 2:
            doc.unreported = 1
            doc.covered = None
        return None

    async def _on_request(self, method: str, params: Any) -> Any:
        return answer_server_request(
            method, params, settings=self.config.settings, roots=self.roots
        )

    # ---- requests ------------------------------------------------------------------------------

    async def request(self, method: str, params: Any, *, timeout: float) -> Any:
        """Send a request to the running server, bounded by ``timeout`` seconds.

        Raises ``TimeoutError`` (after :data:`MAX_CONSECUTIVE_TIMEOUTS` in a row the server
        is considered hung and restarted on next use), :class:`ResponseError`, or
        :class:`ServerUnavailableError` when it is not running or its connection ended.
        """
        connection = self._connection
        if connection is None or self.state != "running":
            raise ServerUnavailableError("is not running")
        try:
            result = await connection.request(method, params, timeout=timeout)
        except TimeoutError:
            self._timeouts += 1
            if self._timeouts >= MAX_CONSECUTIVE_TIMEOUTS and self.state == "running":
                self._failed(f"{self._timeouts} requests in a row timed out (hung)")
                self._kill()
            raise
        except ConnectionClosedError as exc:
            raise ServerUnavailableError(f"failed: {exc}") from None
        self._timeouts = 0
        return result


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ServerUnavailableError):
        return str(exc)
    if isinstance(exc, ResponseError):
        return f"initialize failed: {exc}"
    if isinstance(exc, ConnectionClosedError):
        return f"the server ended during start: {exc}"
    return f"{type(exc).__name__}: {exc}"
