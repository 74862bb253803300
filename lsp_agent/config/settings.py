"""Claude Code compatible settings: the models, and validation that reports exact ranges.

The schema follows Claude Code's ``settings.json`` (source: its settings and hooks
documentation): ``permissions.{allow, ask, deny, defaultMode, additionalDirectories,
disableBypassPermissionsMode}``, ``hooks.{Event: [{matcher, hooks: [{type: "command", command,
timeout}]}]}``, ``env``, ``model``, ``disableAllHooks``, ``allowManagedHooksOnly``,
``allowManagedPermissionRulesOnly``. Unknown keys are kept and ignored (the files are shared
with Claude Code).

:func:`validate_settings` never raises: every problem becomes a :class:`SettingsProblem` with
the range of the offending value, and the offending piece is dropped (a bad rule is ignored,
never read as "allow all"). ``degraded`` reports problems that lose restrictions: a ``deny`` or
``ask`` list that is not a list (or ``null``), any entry of one that is not a valid rule
(``"Bash(rm:*"``, ``"bash(rm:*)"``, ``["Bash(rm:*)"]``), a ``permissions`` value that is not an
object, a misspelt ``Deny``/``Permissions`` key, or a duplicated key (JSON keeps the last value,
so an earlier ``deny`` would vanish). The loader then makes the file fail closed. A bad
``allow`` entry only loses a permission, so it is reported and ignored.

The models are strict (``"yes"`` is not ``true``): every value is type-checked here first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.config.jsonpos import JsonPath, Span, position
from lsp_agent.config.problems import Reporter, SettingsProblem
from lsp_agent.permissions.paths import fold
from lsp_agent.permissions.rules import (
    Rule,
    RuleBehavior,
    RuleOrigin,
    RuleSyntaxError,
    parse_rule,
    unknown_tool_warning,
)
from lsp_agent.protocol.permissions import PermissionMode

SettingsSource = Literal["managed", "flagSettings", "lsp", "local", "project", "user"]
"""Settings layers, highest precedence first (``cli`` rules live in the engine)."""

PRECEDENCE: tuple[SettingsSource, ...] = (
    "managed",
    "flagSettings",
    "lsp",
    "local",
    "project",
    "user",
)

REPOSITORY_SOURCES: frozenset[str] = frozenset({"local", "project"})
"""Layers that live in the workspace: honoured only when the workspace is trusted."""

HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "PostCompact",
    "Notification",
    "InstructionsLoaded",
]
HOOK_EVENTS: tuple[HookEvent, ...] = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "PostCompact",
    "Notification",
    "InstructionsLoaded",
)

MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "plan",
    "bypassPermissions",
    "dontAsk",
)
"""The modes ``permissions.defaultMode`` takes (Claude Code's)."""


class HookCommand(BaseModel):
    """One hook handler: run ``command`` with the shell; ``timeout`` in seconds (default 60)."""

    model_config = ConfigDict(frozen=True, strict=True)

    type: Literal["command"] = "command"
    command: str
    timeout: float | None = Field(default=None, gt=0)


class HookMatcher(BaseModel):
    """Handlers for the events whose target (tool name, session start source...) matches
    ``matcher``: absent, ``""`` or ``"*"`` match everything, otherwise a regular expression
    that must match the whole name (``Edit|Write``)."""

    model_config = ConfigDict(frozen=True, strict=True)

    matcher: str | None = None
    hooks: tuple[HookCommand, ...] = ()


class PermissionsSettings(BaseModel):
    """``permissions`` of a settings file (rule strings as written)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, strict=True)

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    default_mode: PermissionMode | None = Field(default=None, alias="defaultMode")
    additional_directories: tuple[str, ...] = Field(default=(), alias="additionalDirectories")
    disable_bypass_permissions_mode: Literal["disable"] | None = Field(
        default=None, alias="disableBypassPermissionsMode"
    )


class Settings(BaseModel):
    """One settings source after validation (invalid parts dropped)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="allow", strict=True)

    permissions: PermissionsSettings = PermissionsSettings()
    hooks: dict[str, tuple[HookMatcher, ...]] = {}
    env: dict[str, str] = {}
    model: str | None = None
    disable_all_hooks: bool = Field(default=False, alias="disableAllHooks")
    allow_managed_hooks_only: bool = Field(default=False, alias="allowManagedHooksOnly")
    allow_managed_permission_rules_only: bool = Field(
        default=False, alias="allowManagedPermissionRulesOnly"
    )


@dataclass(frozen=True, kw_only=True)
class Validated:
    """What :func:`validate_settings` produced: the settings, their parsed rules, problems,
    and whether a restriction was lost (``degraded``)."""

    settings: Settings
    rules: tuple[Rule, ...]
    problems: tuple[SettingsProblem, ...]
    degraded: bool


PERMISSION_KEYS = frozenset(
    {
        "allow",
        "ask",
        "deny",
        "defaultMode",
        "additionalDirectories",
        "disableBypassPermissionsMode",
    }
)
"""Keys of ``permissions`` this project reads (others are reported as unknown)."""

FAIL_CLOSED = "until it is fixed, these settings fail closed (every change asks)"

KNOWN_KEYS: frozenset[str] = frozenset(
    {
        # Read by lsp-agent.
        "permissions",
        "hooks",
        "env",
        "model",
        "disableAllHooks",
        "allowManagedHooksOnly",
        "allowManagedPermissionRulesOnly",
        "autoCompact",
        "backgroundRequests",
        "autoMemoryEnabled",
        "autoMemoryDirectory",
        "claudeMdExcludes",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "disabledMcpjsonServers",
        "allowedMcpServers",
        "deniedMcpServers",
        "allowManagedMcpServersOnly",
        # Claude Code's other settings (its settings documentation and JSON schema), kept and
        # ignored here: the files are shared.
        "$schema",
        "apiKeyHelper",
        "autoUpdatesChannel",
        "awsCredentialExport",
        "awsAuthRefresh",
        "cleanupPeriodDays",
        "includeCoAuthoredBy",
        "includeGitInstructions",
        "attribution",
        "language",
        "availableModels",
        "modelOverrides",
        "effortLevel",
        "fastMode",
        "fastModePerSessionOptIn",
        "feedbackSurveyRate",
        "httpHookAllowedEnvVars",
        "allowedHttpHookUrls",
        "otelHeadersHelper",
        "statusLine",
        "fileSuggestion",
        "respectGitignore",
        "outputStyle",
        "forceLoginMethod",
        "forceLoginOrgUUID",
        "sandbox",
        "spinnerTipsEnabled",
        "spinnerTipsOverride",
        "spinnerVerbs",
        "terminalProgressBarEnabled",
        "showTurnDuration",
        "alwaysThinkingEnabled",
        "plansDirectory",
        "companyAnnouncements",
        "enabledPlugins",
        "extraKnownMarketplaces",
        "strictKnownMarketplaces",
        "skipWebFetchPreflight",
        "prefersReducedMotion",
        "teammateMode",
        "autoUpdates",
        "theme",
        "verbose",
        "preferredNotifChannel",
        "skippedMarketplaces",
        "skippedPlugins",
        "pluginConfigs",
        "disableAutoMode",
        "agent",
        "skills",
        "voiceEnabled",
        "editorMode",
    }
)
"""Top-level settings keys that are not misspellings: every other key is reported as an
unrecognized field (Claude Code reports such keys as invalid settings) and ignored."""


# The keys :func:`validate_settings` checks and turns into :class:`Settings` fields.
_VALIDATED_KEYS = frozenset(
    {
        "permissions",
        "hooks",
        "env",
        "model",
        "disableAllHooks",
        "allowManagedHooksOnly",
        "allowManagedPermissionRulesOnly",
    }
)


def validate_settings(
    raw: Any,
    *,
    spans: dict[JsonPath, Span],
    text: str,
    path: Path | None,
    origin: RuleOrigin,
    duplicates: tuple[tuple[JsonPath, Span], ...] = (),
) -> Validated:
    """Validate one parsed settings document; see the module docstring. ``duplicates`` are
    the earlier occurrences of duplicated keys (:attr:`~lsp_agent.config.jsonpos.JsonDocument.
    duplicates`); each is an error on the key that replaced it and degrades the file."""
    report = Reporter(path=path, text=text, spans=spans)
    degraded = False
    for where, earlier in duplicates:
        line = position(text, earlier.key_start or earlier.start)[0] + 1
        report.at(
            where,
            f"duplicate key {where[-1]!r} (also on line {line}): JSON keeps only the last one, "
            f"so the earlier value would be lost; {FAIL_CLOSED}",
            key=True,
        )
        degraded = True
    if not isinstance(raw, dict):
        report.at((), "settings must be a JSON object")
        return Validated(
            settings=Settings(), rules=(), problems=tuple(report.problems), degraded=True
        )
    values: dict[str, Any] = {}
    rules: list[Rule] = []

    for key in raw:
        if key not in ("permissions", "hooks") and fold(key) in ("permissions", "hooks"):
            report.at(
                (key,),
                f"{key!r} is not a settings key (keys are case-sensitive: "
                f"{fold(key)!r}); {FAIL_CLOSED}",
                key=True,
            )
            degraded = True
        elif key not in KNOWN_KEYS:
            report.at((key,), unrecognized_field(key, KNOWN_KEYS), "warning", key=True)

    perms = raw.get("permissions", _ABSENT)
    if perms is not _ABSENT:
        if not isinstance(perms, dict):
            report.at(("permissions",), f"permissions must be an object; {FAIL_CLOSED}")
            degraded = True
        else:
            pvalues, prules, pdegraded = _permissions(perms, report, origin)
            values["permissions"] = PermissionsSettings.model_validate(pvalues)
            rules.extend(prules)
            degraded = degraded or pdegraded

    if "hooks" in raw:
        values["hooks"] = _hooks(raw["hooks"], report)

    if "env" in raw:
        env = raw["env"]
        if isinstance(env, dict) and all(isinstance(v, str) for v in env.values()):
            values["env"] = dict(env)
        else:
            report.at(("env",), "env must be an object of string values")

    for key, attr in (
        ("disableAllHooks", "disable_all_hooks"),
        ("allowManagedHooksOnly", "allow_managed_hooks_only"),
        ("allowManagedPermissionRulesOnly", "allow_managed_permission_rules_only"),
    ):
        if key in raw:
            if isinstance(raw[key], bool):
                values[attr] = raw[key]
            else:
                report.at((key,), f"{key} must be true or false")
                # Unknown means "restricted": a malformed disable switch disables.
                values[attr] = True
    model = raw.get("model")
    if model is not None:
        if isinstance(model, str):
            values["model"] = model
        else:
            report.at(("model",), "model must be a string")
    # The keys other modules read from ``model_extra`` (memory options, background requests,
    # autoCompact, plugin options) ride along as they are; each reader checks its value's type.
    for key in KNOWN_KEYS.difference(_VALIDATED_KEYS).intersection(raw):
        values[key] = raw[key]
    settings = Settings.model_validate(values)
    return Validated(
        settings=settings, rules=tuple(rules), problems=tuple(report.problems), degraded=degraded
    )


def unrecognized_field(key: str, known: frozenset[str], *, where: str = "") -> str:
    """Claude Code's words for a key it does not know ("Unrecognized field"), with the
    closest known key when one is close (``difflib``, ratio 0.75)."""
    import difflib

    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    inside = f" in {where}" if where else ""
    return f"unrecognized field {key!r}{inside}{hint}; ignored"


def _permissions(
    perms: dict[str, Any], report: Reporter, origin: RuleOrigin
) -> tuple[dict[str, Any], list[Rule], bool]:
    values: dict[str, Any] = {}
    rules: list[Rule] = []
    degraded = False
    for key in perms:
        if key in PERMISSION_KEYS:
            continue
        where_key: JsonPath = ("permissions", key)
        close = next((k for k in sorted(PERMISSION_KEYS) if fold(k) == fold(key)), None)
        if close is None:
            report.at(
                where_key,
                unrecognized_field(key, PERMISSION_KEYS, where="permissions"),
                "warning",
                key=True,
            )
        elif close in ("deny", "ask"):
            report.at(
                where_key,
                f"{key!r} is not a permissions key (keys are case-sensitive: {close!r}); "
                f"{FAIL_CLOSED}",
                key=True,
            )
            degraded = True
        else:
            report.at(
                where_key,
                f"{key!r} is not a permissions key (keys are case-sensitive: {close!r}); ignored",
                key=True,
            )
    for behavior in ("deny", "ask", "allow"):
        if behavior not in perms:
            continue
        items = perms[behavior]
        restricts = behavior != "allow"
        # A deny/ask entry that cannot be read must not silently stop restricting.
        consequence = FAIL_CLOSED if restricts else "it is ignored"
        where: JsonPath = ("permissions", behavior)
        if not isinstance(items, list):
            report.at(
                where,
                f"permissions.{behavior} must be a list of rule strings, not "
                f"{_json_type(items)}; {consequence}",
            )
            degraded = degraded or restricts
            continue
        kept: list[str] = []
        for index, item in enumerate(items):
            if not isinstance(item, str):
                report.at(
                    (*where, index),
                    f"a permission rule must be a string, not {_json_type(item)} "
                    f"({_short_json(item)}); {consequence}",
                )
                degraded = degraded or restricts
                continue
            try:
                rule = parse_rule(item, behavior=behavior, origin=origin)
            except RuleSyntaxError as exc:
                report.at((*where, index), f"{exc}; {consequence}")
                degraded = degraded or restricts
                continue
            warning = unknown_tool_warning(rule)
            if warning:
                report.at((*where, index), warning, "warning")
            kept.append(item)
            rules.append(rule)
        values[behavior] = tuple(kept)
    mode = perms.get("defaultMode")
    if mode is not None:
        if mode in MODES:
            values["defaultMode"] = mode
        else:
            report.at(("permissions", "defaultMode"), _unknown_mode(mode))
    dirs = perms.get("additionalDirectories")
    if dirs is not None:
        if isinstance(dirs, list) and all(isinstance(d, str) for d in dirs):
            values["additionalDirectories"] = tuple(dirs)
        else:
            report.at(
                ("permissions", "additionalDirectories"),
                "additionalDirectories must be a list of paths",
            )
    bypass = perms.get("disableBypassPermissionsMode")
    if bypass is not None:
        if bypass != "disable":
            report.at(
                ("permissions", "disableBypassPermissionsMode"),
                'disableBypassPermissionsMode must be "disable"; treating it as "disable"',
            )
        values["disableBypassPermissionsMode"] = "disable"
    return values, rules, degraded


def _hooks(hooks: Any, report: Reporter) -> dict[str, tuple[HookMatcher, ...]]:
    """The ``hooks`` object: per event, its usable matcher groups (unusable parts reported
    and dropped, the rest kept)."""
    out: dict[str, tuple[HookMatcher, ...]] = {}
    if not isinstance(hooks, dict):
        report.at(("hooks",), "hooks must be an object mapping event names to matcher lists")
        return out
    for event, groups in hooks.items():
        where: JsonPath = ("hooks", event)
        if event not in HOOK_EVENTS:
            report.at(
                where, f"unknown hook event {event!r}; the hooks are ignored", "warning", key=True
            )
            continue
        if not isinstance(groups, list):
            report.at(where, f"hooks.{event} must be a list of {{matcher, hooks}} objects")
            continue
        kept = [
            matcher
            for gi, group in enumerate(groups)
            if (matcher := _hook_group(group, (*where, gi), report)) is not None
        ]
        if kept:
            out[event] = tuple(kept)
    return out


def _hook_group(group: Any, where: JsonPath, report: Reporter) -> HookMatcher | None:
    """One ``{matcher, hooks}`` group, or ``None`` when it is unusable or has no usable
    command hook."""
    if not isinstance(group, dict):
        report.at(where, "a hook matcher must be an object with a hooks list")
        return None
    matcher = group.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        report.at((*where, "matcher"), "matcher must be a string")
        return None
    if matcher not in (None, "", "*"):
        try:
            re.compile(matcher)
        except re.error as exc:
            report.at((*where, "matcher"), f"matcher is not a valid regular expression: {exc}")
            return None
    handlers = group.get("hooks")
    if not isinstance(handlers, list):
        report.at(where, "a hook matcher needs a hooks list")
        return None
    commands = [
        command
        for hi, handler in enumerate(handlers)
        if (command := _command_hook(handler, (*where, "hooks", hi), report)) is not None
    ]
    return HookMatcher(matcher=matcher, hooks=tuple(commands)) if commands else None


def _command_hook(handler: Any, where: JsonPath, report: Reporter) -> HookCommand | None:
    """One ``{"type": "command", "command": ..., "timeout": seconds}`` hook, or ``None``
    (reported)."""
    if not isinstance(handler, dict):
        report.at(where, 'a hook must be an object like {"type": "command", "command": ...}')
        return None
    kind = handler.get("type", "command")
    if kind != "command":
        report.at(
            (*where, "type"),
            f'hook type {kind!r} is not supported (only "command"); ignored',
            "warning",
        )
        return None
    command = handler.get("command")
    if not isinstance(command, str) or not command.strip():
        report.at(where, "a command hook needs a non-empty command string")
        return None
    timeout = handler.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
    ):
        report.at((*where, "timeout"), "timeout must be a positive number of seconds")
        return None
    return HookCommand(command=command, timeout=timeout)


_ABSENT = object()


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _short_json(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


OriginFactory = Callable[[str, Path | None], RuleOrigin]
"""Builds the rule origin for a source and settings file."""

FALLBACK_ASK_RULES: tuple[str, ...] = (
    "Bash",
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
)
"""Ask rules used in place of a settings file that is broken and has no last good version."""


def fallback_rules(origin: RuleOrigin) -> tuple[Rule, ...]:
    """The ask-before-everything rules standing in for a broken settings file (their origin
    says so: a decision they make names the broken file)."""
    behavior: RuleBehavior = "ask"
    broken = replace(origin, broken=True)
    return tuple(parse_rule(t, behavior=behavior, origin=broken) for t in FALLBACK_ASK_RULES)


def _unknown_mode(mode: object) -> str:
    """The problem of a ``defaultMode`` outside :data:`MODES`, naming every mode there is."""
    return f"unknown defaultMode {mode!r}; expected one of {', '.join(MODES)}"
