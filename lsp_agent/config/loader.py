"""Layered settings: find, read, validate and merge every settings source.

Sources, highest precedence first (managed values cannot be overridden):

``managed``
    The administrator's policy file (:func:`managed_settings_path`: Claude Code's
    ``/etc/claude-code/managed-settings.json`` on Linux,
    ``/Library/Application Support/ClaudeCode/managed-settings.json`` on macOS,
    ``C:\\Program Files\\ClaudeCode\\managed-settings.json`` on Windows).
``flagSettings``
    ``--settings FILE`` of the command line.
``lsp``
    ``initializationOptions.lspAgent.settings`` / ``workspace/didChangeConfiguration``
    (``settings.lspAgent.settings``), the editor's own settings, same shape as a file.
``local``, ``project``
    ``<cwd>/.claude/settings.local.json`` and ``<cwd>/.claude/settings.json``: from the
    repository, so honoured only in a trusted workspace (otherwise reported and ignored).
``user``
    ``~/.claude/settings.json``.

Rules of all layers are combined (deny beats ask beats allow, whatever the layer); scalar
values (``defaultMode``, ``model``) come from the highest layer that sets them. Every problem
is reported. A file that is not valid JSON (or not an object) is replaced by its last good
version, or, if there is none, by ask-before-every-change rules with ``bypassPermissions``
off. A file that can be read but lost a restriction (a malformed ``deny``/``ask`` entry, a
duplicated key...: :func:`~lsp_agent.config.settings.validate_settings`'s ``degraded``) fails
closed: its readable deny and ask rules (and those of its last good version) stay, every
change asks, ``bypassPermissions`` is off, and its grants (allow rules, ``defaultMode``,
``additionalDirectories``) are dropped until it is fixed. An empty file reads as ``{}`` with a
warning.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lsp_agent.config.jsonpos import JsonSyntaxError, parse_document, position
from lsp_agent.config.problems import SettingsProblem, problem_at_start
from lsp_agent.config.settings import (
    PRECEDENCE,
    REPOSITORY_SOURCES,
    HookMatcher,
    Settings,
    SettingsSource,
    Validated,
    fallback_rules,
    validate_settings,
)
from lsp_agent.permissions.policy import Policy
from lsp_agent.permissions.rules import Rule, RuleOrigin
from lsp_agent.protocol.permissions import PermissionMode

log = logging.getLogger(__name__)

MAX_SETTINGS_BYTES = 1_000_000
"""Settings files larger than this are not read (reported as a problem)."""


def managed_dir(platform: str | None = None) -> Path:
    """Claude Code's folder for administrator policy on ``platform`` (default: this one);
    it holds ``managed-settings.json`` and the managed ``CLAUDE.md``."""
    platform = platform or sys.platform
    if platform == "darwin":
        return Path("/Library/Application Support/ClaudeCode")
    if platform.startswith("win"):
        return Path("C:/Program Files/ClaudeCode")
    return Path("/etc/claude-code")


def managed_settings_path(platform: str | None = None) -> Path:
    """Where the managed policy file lives on ``platform`` (default: this one)."""
    return managed_dir(platform) / "managed-settings.json"


@dataclass(frozen=True, kw_only=True)
class SettingsLayer:
    """One source after validation. ``applied`` is false for repository layers of an
    untrusted workspace; ``fallback`` says what stands in for a broken file (``"last-good"``,
    ``"ask"`` (ask-before-every-change rules, bypass off) or ``None``)."""

    source: SettingsSource
    path: Path | None
    settings: Settings
    rules: tuple[Rule, ...]
    exists: bool
    applied: bool = True
    fallback: str | None = None


@dataclass(frozen=True, kw_only=True)
class LoadedSettings:
    """The merged result of one load: layers highest precedence first, every problem, and every
    settings file considered (so a door can clear diagnostics of files that were fixed)."""

    layers: tuple[SettingsLayer, ...]
    problems: tuple[SettingsProblem, ...]
    files: tuple[Path, ...]
    trusted: bool
    cwd: Path
    home: Path

    def applied(self) -> tuple[SettingsLayer, ...]:
        """Layers that take effect, highest precedence first."""
        return tuple(layer for layer in self.layers if layer.applied)

    def broken_places(self) -> tuple[str, ...]:
        """``file:line:col`` (1-based) of the first error of each settings file whose
        ask-before-every-change rules stand in for it (broken, with no last good version)."""
        places: list[str] = []
        for layer in self.applied():
            if layer.fallback != "ask" or layer.path is None:
                continue
            first = next(
                (p for p in self.problems if p.path == layer.path and p.severity == "error"), None
            )
            line, col = first.start if first is not None else (0, 0)
            places.append(f"{layer.path}:{line + 1}:{col + 1}")
        return tuple(places)

    def rules(self) -> tuple[Rule, ...]:
        """Permission rules in force (only managed ones when managed policy says
        ``allowManagedPermissionRulesOnly``)."""
        layers = self.applied()
        if any(
            lay.source == "managed" and lay.settings.allow_managed_permission_rules_only
            for lay in layers
        ):
            layers = tuple(lay for lay in layers if lay.source == "managed")
        return tuple(rule for layer in layers for rule in layer.rules)

    def default_mode(self) -> PermissionMode | None:
        """``permissions.defaultMode`` of the highest layer that sets it."""
        for layer in self.applied():
            if layer.settings.permissions.default_mode is not None:
                return layer.settings.permissions.default_mode
        return None

    def model(self) -> str | None:
        """``model`` of the highest layer that sets it."""
        for layer in self.applied():
            if layer.settings.model:
                return layer.settings.model
        return None

    def disable_bypass(self) -> bool:
        """Whether any layer disables ``bypassPermissions`` (a narrowing, honoured anywhere)."""
        return any(
            layer.settings.permissions.disable_bypass_permissions_mode == "disable"
            or layer.fallback == "ask"
            for layer in self.applied()
        )

    def additional_directories(self) -> tuple[Path, ...]:
        """``permissions.additionalDirectories`` of every applied layer, resolved against the
        layer's root (``~`` expanded)."""
        out: list[Path] = []
        for layer in self.applied():
            base = self._root(layer)
            for raw in layer.settings.permissions.additional_directories:
                path = Path(raw).expanduser()
                out.append((path if path.is_absolute() else base / path).resolve())
        return tuple(dict.fromkeys(out))

    def env(self) -> dict[str, str]:
        """``env`` merged from the lowest to the highest layer."""
        merged: dict[str, str] = {}
        for layer in reversed(self.applied()):
            merged.update(layer.settings.env)
        return merged

    def hooks(self) -> dict[str, tuple[tuple[SettingsSource, HookMatcher], ...]]:
        """Hook matchers by event with their source. ``disableAllHooks`` in managed settings
        turns every hook off; elsewhere it turns off every non-managed hook; managed
        ``allowManagedHooksOnly`` keeps only managed hooks."""
        layers = self.applied()
        managed = [lay for lay in layers if lay.source == "managed"]
        if any(lay.settings.disable_all_hooks for lay in managed):
            return {}
        if any(lay.settings.disable_all_hooks for lay in layers) or any(
            lay.settings.allow_managed_hooks_only for lay in managed
        ):
            layers = tuple(managed)
        out: dict[str, list[tuple[SettingsSource, HookMatcher]]] = {}
        for layer in layers:
            for event, matchers in layer.settings.hooks.items():
                out.setdefault(event, []).extend((layer.source, m) for m in matchers)
        return {event: tuple(items) for event, items in out.items()}

    def policy(self) -> Policy:
        """The permission engine's view of these settings."""
        return Policy(
            rules=self.rules(),
            disable_bypass=self.disable_bypass(),
            trusted=self.trusted,
            additional_roots=self.additional_directories(),
            default_mode=self.default_mode(),
        )

    def _root(self, layer: SettingsLayer) -> Path:
        if layer.source in ("project", "local", "lsp", "flagSettings"):
            return self.cwd
        if layer.source == "user":
            return self.home
        return Path("/")


@dataclass(kw_only=True)
class SettingsLoader:
    """Reads every source for one project directory ``cwd``; see the module docstring.

    ``last_good`` keeps, per file, the last version that was valid; it is updated by
    :meth:`load` and used when a file breaks.
    """

    cwd: Path
    home: Path = field(default_factory=Path.home)
    managed_path: Path | None = None
    flag_settings_path: Path | None = None
    lsp_settings: Mapping[str, Any] | None = None
    trusted: bool = False
    last_good: dict[Path, SettingsLayer] = field(default_factory=dict)

    def files(self) -> dict[SettingsSource, Path]:
        """The settings files by source (whether they exist or not)."""
        out: dict[SettingsSource, Path] = {
            "managed": self.managed_path or managed_settings_path(),
            "local": self.cwd / ".claude" / "settings.local.json",
            "project": self.cwd / ".claude" / "settings.json",
            "user": self.home / ".claude" / "settings.json",
        }
        if self.flag_settings_path is not None:
            out["flagSettings"] = self.flag_settings_path
        return out

    def origin(self, source: str, path: Path | None) -> RuleOrigin:
        """How relative path rules of ``source`` resolve."""
        if source == "user":
            root = self.home
        elif source == "managed":
            root = Path("/")
        else:
            root = self.cwd
        return RuleOrigin(
            source=source, settings_root=root, cwd=self.cwd, home=self.home, file=path
        )

    def load(self) -> LoadedSettings:
        """Read and validate every source now; never raises."""
        files = self.files()
        layers: list[SettingsLayer] = []
        problems: list[SettingsProblem] = []
        for source in PRECEDENCE:
            if source == "lsp":
                if self.lsp_settings is not None:
                    layer, more = self._from_value(source, self.lsp_settings)
                    layers.append(layer)
                    problems.extend(more)
                continue
            path = files.get(source)
            if path is None:
                continue
            layer, more = self._from_file(source, path)
            if source in REPOSITORY_SOURCES and layer.exists and not self.trusted:
                layer = replace(layer, applied=False)
                more = [
                    problem_at_start(
                        path,
                        "This workspace is not trusted, so its settings (permission rules, hooks, "
                        "environment) are ignored. Trust the workspace in your editor to use them.",
                        severity="information",
                    ),
                    *more,
                ]
            layers.append(layer)
            problems.extend(more)
        for problem in problems:
            log.log(
                logging.ERROR if problem.severity == "error" else logging.INFO,
                "settings: %s",
                problem.log_line(),
            )
        return LoadedSettings(
            layers=tuple(layers),
            problems=tuple(problems),
            files=tuple(files.values()),
            trusted=self.trusted,
            cwd=self.cwd,
            home=self.home,
        )

    def _from_value(
        self, source: SettingsSource, value: Mapping[str, Any]
    ) -> tuple[SettingsLayer, list[SettingsProblem]]:
        import json

        text = json.dumps(value, indent=2, default=str)
        try:
            document = parse_document(text)
            raw, spans = document.value, document.spans
        except JsonSyntaxError:
            raw, spans = {}, {}
        validated = validate_settings(
            raw, spans=spans, text=text, path=None, origin=self.origin(source, None)
        )
        if validated.degraded:
            return self._fail_closed(source, None, validated, text)
        layer = SettingsLayer(
            source=source,
            path=None,
            settings=validated.settings,
            rules=validated.rules,
            exists=True,
        )
        return layer, list(validated.problems)

    def _from_file(
        self, source: SettingsSource, path: Path
    ) -> tuple[SettingsLayer, list[SettingsProblem]]:
        empty = SettingsLayer(source=source, path=path, settings=Settings(), rules=(), exists=False)
        try:
            data = path.read_bytes() if path.is_file() else None
        except OSError as exc:
            return self._broken(
                source, path, [problem_at_start(path, f"cannot read the settings file: {exc}")], ""
            )
        if data is None:
            self.last_good.pop(path, None)
            return empty, []
        if len(data) > MAX_SETTINGS_BYTES:
            return self._broken(
                source,
                path,
                [
                    problem_at_start(
                        path, f"the settings file is larger than {MAX_SETTINGS_BYTES} bytes"
                    )
                ],
                "",
            )
        text = data.decode("utf-8", "replace").removeprefix("\ufeff")
        if not text.strip():
            self.last_good.pop(path, None)
            note = "the settings file is empty; it is read as {} (no settings)"
            return replace(empty, exists=True), [
                problem_at_start(path, note, severity="warning", text=text)
            ]
        try:
            document = parse_document(text)
        except JsonSyntaxError as exc:
            at = position(text, exc.offset)
            end = (at[0], at[1] + 1)
            problem = SettingsProblem(
                path=path,
                start=at,
                end=end,
                message=f"invalid JSON: {exc}",
                severity="error",
                text=text,
            )
            return self._broken(source, path, [problem], text)
        if not isinstance(document.value, dict):
            # Nothing in it can be read: like invalid JSON (last good version, or asking).
            whole = document.spans[()]
            problem = SettingsProblem(
                path=path,
                start=position(text, whole.start),
                end=position(text, whole.end),
                message="settings must be a JSON object",
                text=text,
            )
            return self._broken(source, path, [problem], text)
        validated = validate_settings(
            document.value,
            spans=document.spans,
            text=text,
            path=path,
            origin=self.origin(source, path),
            duplicates=document.duplicates,
        )
        if validated.degraded:
            return self._fail_closed(source, path, validated, text)
        layer = SettingsLayer(
            source=source,
            path=path,
            settings=validated.settings,
            rules=validated.rules,
            exists=True,
        )
        self.last_good[path] = layer
        return layer, list(validated.problems)

    def _fail_closed(
        self, source: SettingsSource, path: Path | None, validated: Validated, text: str
    ) -> tuple[SettingsLayer, list[SettingsProblem]]:
        """The layer for a file that lost a restriction: its readable deny and ask rules (and
        its last good version's), ask-before-every-change rules and bypass off (``fallback=
        "ask"``); no allow rules, ``defaultMode`` or ``additionalDirectories``."""
        good = self.last_good.get(path) if path is not None else None
        restricting = [r for r in validated.rules if r.behavior != "allow"]
        seen = {(r.behavior, r.text) for r in restricting}
        if good is not None:
            restricting += [
                r for r in good.rules if r.behavior != "allow" and (r.behavior, r.text) not in seen
            ]
        grants = {"allow": (), "default_mode": None, "additional_directories": ()}
        permissions = validated.settings.permissions.model_copy(update=grants)
        settings = validated.settings.model_copy(update={"permissions": permissions})
        layer = SettingsLayer(
            source=source,
            path=path,
            settings=settings,
            rules=(*restricting, *fallback_rules(self.origin(source, path))),
            exists=True,
            fallback="ask",
        )
        note = (
            "a restriction in these settings cannot be read (see the errors): until that is "
            "fixed, asking before every change, with bypassPermissions off and their allow "
            "rules, defaultMode and additionalDirectories ignored"
        )
        return layer, [
            *validated.problems,
            problem_at_start(path, note, severity="warning", text=text),
        ]

    def _broken(
        self, source: SettingsSource, path: Path, problems: list[SettingsProblem], text: str
    ) -> tuple[SettingsLayer, list[SettingsProblem]]:
        good = self.last_good.get(path)
        if good is not None:
            note = "using the last valid version of this file until it is fixed"
            return replace(good, fallback="last-good"), [
                *problems,
                problem_at_start(path, note, severity="information", text=text),
            ]
        note = (
            "this file is broken and was never valid: asking before every change until it is fixed"
        )
        layer = SettingsLayer(
            source=source,
            path=path,
            settings=Settings(),
            rules=fallback_rules(self.origin(source, path)),
            exists=True,
            fallback="ask",
        )
        return layer, [*problems, problem_at_start(path, note, severity="warning", text=text)]


def settings_files_to_watch(loader: SettingsLoader) -> Sequence[Path]:
    """Every settings file of ``loader`` (for the watcher)."""
    return tuple(loader.files().values())
