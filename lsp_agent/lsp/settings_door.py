"""The LSP door's side of settings: one :class:`~lsp_agent.config.store.SettingsStore` per
project directory, kept current and shown to the user.

* Trust comes from ``initializationOptions.lspAgent.trusted``; the editor's own settings layer
  from ``initializationOptions.lspAgent.settings`` and ``workspace/didChangeConfiguration``
  (``{"settings": {"lspAgent": {"settings": {...}}}}``).
* Every store watches its settings files (a background task stopped at ``shutdown``) and is
  reloaded when one changes; the sessions' permission engines and hooks read the new values
  at their next tool call.
* After every (re)load the problems are published with ``textDocument/publishDiagnostics`` on
  each settings file, positions in the negotiated encoding; a file whose problems are fixed
  gets an empty list. Problems of the editor's settings (no file), one line per settings file
  with errors (the user may never open it to see its diagnostics) and the notice that an
  untrusted workspace's project settings and hooks are ignored go to ``window/showMessage``
  (warning), once each.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from lsp_agent.config.diagnostics import PositionEncoding, problems_to_diagnostics
from lsp_agent.config.loader import LoadedSettings
from lsp_agent.config.settings import REPOSITORY_SOURCES
from lsp_agent.config.store import SettingsStore

if TYPE_CHECKING:
    from lsp_agent.lsp.server import AgentLanguageServer

logger = logging.getLogger(__name__)

WATCH_STOP_TIMEOUT_S = 2.0
"""How long ``shutdown`` waits for the file watchers to stop (seconds)."""


class SettingsDoor:
    """See the module docstring. Event-loop only (single writer)."""

    def __init__(
        self,
        *,
        server: AgentLanguageServer,
        home: Path | None = None,
        flag_settings: Path | None = None,
    ) -> None:
        self.server = server
        self.home = home
        self.flag_settings = flag_settings
        """``--settings FILE`` of ``lsp-agent serve`` (source ``flagSettings``)."""
        self.trusted = False
        self.lsp_settings: dict[str, Any] | None = None
        self.stores: dict[Path, SettingsStore] = {}
        self._published: dict[Path, set[str]] = {}
        """Per store: the URIs that currently show settings problems."""
        self._shown: dict[Path, set[str]] = {}
        """Per store: messages shown with ``window/showMessage`` that are still current."""
        self._stop: asyncio.Event | None = None
        self._watchers: set[asyncio.Task[None]] = set()

    # ---- configuration -------------------------------------------------------------------------

    def configure(self, *, trusted: bool, settings: dict[str, Any] | None) -> None:
        """Adopt ``initializationOptions.lspAgent.{trusted,settings}`` (at ``initialize``)."""
        self.trusted = trusted
        self.lsp_settings = settings

    def did_change_configuration(self, raw: Any) -> None:
        """``workspace/didChangeConfiguration``: take ``settings.lspAgent.settings`` (an object,
        or ``null`` to drop the editor's layer) and reload every store. Settings without an
        ``lspAgent`` object leave the layer as it is; malformed ones are logged and ignored."""
        if not isinstance(raw, dict) or "lspAgent" not in raw:
            return
        ours = raw["lspAgent"]
        if not isinstance(ours, dict):
            logger.warning(
                "ignoring workspace/didChangeConfiguration: settings.lspAgent must be an object"
            )
            return
        if "trusted" in ours:
            self.set_trusted(ours["trusted"])
        if "settings" not in ours:
            return
        value = ours["settings"]
        if value is not None and not isinstance(value, dict):
            logger.warning(
                "ignoring workspace/didChangeConfiguration: settings.lspAgent.settings must be "
                "an object shaped like .claude/settings.json, got %s",
                type(value).__name__,
            )
            return
        self.lsp_settings = value
        for store in self.stores.values():
            store.set_lsp_settings(value)

    def set_trusted(self, trusted: object) -> None:
        """The user (un)trusted the workspace in the editor (``settings.lspAgent.trusted``):
        every store reloads with the project's settings and hooks on or off; sessions read
        memory files, settings and hooks under the new trust from their next turn. A value
        that is not a boolean is logged and ignored (trust is never coerced)."""
        if type(trusted) is not bool:
            logger.warning(
                "ignoring workspace/didChangeConfiguration: settings.lspAgent.trusted must be "
                "true or false, got %s",
                type(trusted).__name__,
            )
            return
        if trusted == self.trusted:
            return
        self.trusted = trusted
        for store in self.stores.values():
            store.set_trusted(trusted)

    # ---- stores --------------------------------------------------------------------------------

    def store_for(self, cwd: Path) -> SettingsStore:
        """The store of project directory ``cwd`` (created, published and watched on first
        use; needs the event loop for watching)."""
        key = cwd.resolve()
        store = self.stores.get(key)
        if store is not None:
            return store
        store = SettingsStore(
            cwd=key,
            home=self.home,
            flag_settings_path=self.flag_settings,
            lsp_settings=self.lsp_settings,
            trusted=self.trusted,
        )
        store.on_change = lambda loaded: self._publish(key, loaded)
        self.stores[key] = store
        self._publish(key, store.loaded)
        self._watch(store)
        return store

    def open_folders(self, folders: Iterable[Path]) -> None:
        """Create the stores of the workspace folders (at ``initialized``), so settings
        problems show before any session starts."""
        for folder in folders:
            if folder.is_dir():
                self.store_for(folder)

    def _watch(self, store: SettingsStore) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            logger.debug("no event loop: settings of %s are not watched", store.loader.cwd)
            return
        if self._stop is None:
            self._stop = asyncio.Event()
        task = asyncio.create_task(self._run_watch(store, self._stop))
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)

    async def _run_watch(self, store: SettingsStore, stop: asyncio.Event) -> None:
        try:
            await store.watch(stop=stop)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception(
                "watching the settings of %s failed; changes need a restart", store.loader.cwd
            )

    async def shutdown(self) -> None:
        """Stop the file watchers (bounded by :data:`WATCH_STOP_TIMEOUT_S`)."""
        if self._stop is not None:
            self._stop.set()
        pending = set(self._watchers)
        if not pending:
            return
        _done, late = await asyncio.wait(pending, timeout=WATCH_STOP_TIMEOUT_S)
        for task in late:
            task.cancel()
        for task in late:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # ---- showing problems ----------------------------------------------------------------------

    @property
    def encoding(self) -> PositionEncoding:
        """The position encoding negotiated with the client."""
        value = str(self.server.workspace.position_encoding or "utf-16")
        return value if value in ("utf-8", "utf-16", "utf-32") else "utf-16"  # type: ignore[return-value]

    def _publish(self, key: Path, loaded: LoadedSettings) -> None:
        """Publish ``loaded.problems`` per settings file; clear files that were fixed."""
        by_uri = problems_to_diagnostics(
            loaded.problems, files=loaded.files, encoding=self.encoding
        )
        before = self._published.get(key, set())
        now = {uri for uri, items in by_uri.items() if items}
        for uri, items in by_uri.items():
            if items or uri in before:
                self.server.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(
                        uri=uri, diagnostics=[_diagnostic(item) for item in items]
                    )
                )
        self._published[key] = now
        self._notify(key, _messages(loaded))

    def _notify(self, key: Path, messages: list[str]) -> None:
        """Show each message once while it stays current (it shows again if it comes back
        after a reload without it)."""
        shown = self._shown.get(key, set())
        for text in dict.fromkeys(messages):
            if text not in shown:
                self.server.window_show_message(
                    types.ShowMessageParams(type=types.MessageType.Warning, message=text)
                )
        self._shown[key] = set(messages)


def _messages(loaded: LoadedSettings) -> list[str]:
    """Problems without a file, and the untrusted-workspace notice."""
    out: list[str] = []
    ignored = [
        layer.path
        for layer in loaded.layers
        if layer.source in REPOSITORY_SOURCES and layer.exists and not layer.applied
    ]
    if ignored:
        names = ", ".join(str(p) for p in ignored if p is not None)
        out.append(
            f"lsp-agent: untrusted workspace: project settings and hooks ignored ({names}). "
            "Trust the workspace in your editor to use them."
        )
    broken: dict[Path, list[str]] = {}
    for problem in loaded.problems:
        if problem.path is None:
            out.append(f"lsp-agent: editor settings (lspAgent.settings): {problem.message}")
        elif problem.severity == "error":
            line, column = problem.start
            broken.setdefault(problem.path, []).append(
                f"{line + 1}:{column + 1}: {problem.message}"
            )
    # The diagnostics sit on a file the user may never open: say once that it is broken.
    for path, errors in broken.items():
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        out.append(
            f"lsp-agent: {path} has errors: {errors[0]}{more}. Open it to see them; until it "
            "is fixed the agent may ask before every change."
        )
    return out


def _diagnostic(item: dict[str, Any]) -> types.Diagnostic:
    """An LSP diagnostic from :func:`problems_to_diagnostics`' plain dict."""
    start, end = item["range"]["start"], item["range"]["end"]
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=start["line"], character=start["character"]),
            end=types.Position(line=end["line"], character=end["character"]),
        ),
        severity=types.DiagnosticSeverity(item["severity"]),
        source=item["source"],
        message=item["message"],
    )
