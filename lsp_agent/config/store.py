"""The settings in force for one project, kept current: reload, watch, persist "always" rules.

A door creates one :class:`SettingsStore` per project directory and gives
:meth:`SettingsStore.policy` to the sessions' permission engines and
:meth:`SettingsStore.hooks` to their hook runners; both read the latest successful load, so a
settings change takes effect at the next tool call. :meth:`SettingsStore.watch` reloads when a
settings file changes on disk (``watchfiles``); the door calls :meth:`set_lsp_settings` on
``workspace/didChangeConfiguration`` and publishes :attr:`SettingsStore.loaded` problems as
diagnostics (see :mod:`lsp_agent.config.diagnostics`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lsp_agent.config.loader import LoadedSettings, SettingsLoader
from lsp_agent.config.persist import add_permission_rules
from lsp_agent.config.settings import HookMatcher
from lsp_agent.permissions.policy import Policy
from lsp_agent.permissions.rules import RuleBehavior
from lsp_agent.protocol.permissions import RuleScope

log = logging.getLogger(__name__)

WATCH_DEBOUNCE_MS = 100
"""How long the watcher waits for more changes before reloading (milliseconds)."""


class SettingsStore:
    """Current settings of one project directory; see the module docstring.

    ``on_change`` is called with the new :class:`LoadedSettings` after every reload (for
    diagnostics and notices); exceptions it raises are logged.
    """

    def __init__(
        self,
        *,
        cwd: Path,
        home: Path | None = None,
        managed_path: Path | None = None,
        flag_settings_path: Path | None = None,
        lsp_settings: Mapping[str, Any] | None = None,
        trusted: bool = False,
        on_change: Callable[[LoadedSettings], None] | None = None,
    ) -> None:
        self.loader = SettingsLoader(
            cwd=cwd.resolve(),
            home=home or Path.home(),
            managed_path=managed_path,
            flag_settings_path=flag_settings_path,
            lsp_settings=lsp_settings,
            trusted=trusted,
        )
        self.on_change = on_change
        self.version = 0
        self.loaded = self.loader.load()
        self._policy = self.loaded.policy()

    # -- reading -------------------------------------------------------------------------------

    def policy(self) -> Policy:
        """The permission policy of the latest load (a :data:`PolicyProvider`)."""
        return self._policy

    def hook_matchers(self) -> Mapping[str, Sequence[tuple[str, HookMatcher]]]:
        """Hook matchers in force by event (a :data:`~lsp_agent.hooks.runner.HookSource`)."""
        return self.loaded.hooks()

    def env(self) -> dict[str, str]:
        """``env`` of the settings in force (for tools and hooks)."""
        return self.loaded.env()

    @property
    def trusted(self) -> bool:
        """Whether repository settings and hooks are honoured."""
        return self.loader.trusted

    # -- changing ------------------------------------------------------------------------------

    def reload(self) -> LoadedSettings:
        """Read every source again and notify ``on_change``."""
        self.loaded = self.loader.load()
        self._policy = self.loaded.policy()
        self.version += 1
        if self.on_change is not None:
            try:
                self.on_change(self.loaded)
            except Exception:
                log.exception("settings change listener failed")
        return self.loaded

    def set_lsp_settings(self, settings: Mapping[str, Any] | None) -> LoadedSettings:
        """Replace the editor-provided layer (``didChangeConfiguration``) and reload."""
        self.loader.lsp_settings = settings
        return self.reload()

    def set_trusted(self, trusted: bool) -> LoadedSettings:
        """The user (un)trusted the workspace: reload with repository layers on or off."""
        self.loader.trusted = trusted
        return self.reload()

    def persist(self, scope: RuleScope, behavior: RuleBehavior, rules: Sequence[str]) -> None:
        """Save "always" rules: ``project`` → ``.claude/settings.local.json``, ``user`` →
        ``~/.claude/settings.json`` (atomically), then reload. ``session`` does nothing here.
        Raises ``ValueError`` if the file is not a JSON object (it is left untouched) and
        ``OSError`` if it cannot be written."""
        if scope == "session":
            return
        files = self.loader.files()
        path = files["local"] if scope == "project" else files["user"]
        add_permission_rules(path, behavior=behavior, rules=rules)
        self.reload()

    # -- watching ------------------------------------------------------------------------------

    def watched_files(self) -> tuple[Path, ...]:
        """Every settings file this store reads."""
        return tuple(self.loader.files().values())

    async def watch(
        self, *, stop: asyncio.Event | None = None, ready: asyncio.Event | None = None
    ) -> None:
        """Reload whenever a settings file is created, changed or deleted, until ``stop`` is set
        (or the task is cancelled). Watches each file's folder, or the nearest existing parent
        so that a ``.claude`` folder created later is noticed. ``ready`` is set once watching."""
        import watchfiles

        files = {f.resolve() if f.parent.exists() else f for f in self.watched_files()}
        dirs: dict[Path, bool] = {}
        for f in files:
            folder = f.parent
            recursive = False
            while not folder.exists() and folder != folder.parent:
                folder, recursive = folder.parent, True
            dirs[folder] = dirs.get(folder, False) or recursive
        interesting = {str(f) for f in files} | {str(f.parent) for f in files}

        def wanted(_change: watchfiles.Change, name: str) -> bool:
            return name in interesting or any(name == str(d) for d in dirs)

        stop_event = stop or asyncio.Event()
        # One watcher per folder set: recursion only where a folder is still missing.
        flat = [d for d, rec in dirs.items() if not rec]
        deep = [d for d, rec in dirs.items() if rec]
        tasks = []
        for paths, recursive in ((flat, False), (deep, True)):
            if paths:
                tasks.append(asyncio.create_task(self._watch(paths, recursive, wanted, stop_event)))
        if ready is not None:
            # watchfiles starts its notifier inside the generator; give it a moment to arm.
            await asyncio.sleep(0.05)
            ready.set()
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _watch(
        self,
        paths: list[Path],
        recursive: bool,
        wanted: Callable[[Any, str], bool],
        stop: asyncio.Event,
    ) -> None:
        import watchfiles

        async for changes in watchfiles.awatch(
            *paths,
            watch_filter=wanted,
            debounce=WATCH_DEBOUNCE_MS,
            step=20,
            stop_event=stop,
            recursive=recursive,
            ignore_permission_denied=True,
        ):
            log.info(
                "settings changed on disk (%s); reloading", ", ".join(sorted(c[1] for c in changes))
            )
            self.reload()
