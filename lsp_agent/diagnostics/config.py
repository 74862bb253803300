"""Settings of verification, managed language servers and fix suggestions.

All models read camelCase JSON (``initializationOptions.lspAgent.diagnostics`` on the LSP door,
a settings file elsewhere) and also accept snake_case names from Python. Unknown keys are
errors, so a typo in a setting is reported instead of silently ignored. Times are in
milliseconds. docs/verification.md lists every setting with an example.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

SeverityName = Literal["error", "warning", "information", "hint"]
"""Severity names used in settings (LSP ``DiagnosticSeverity`` 1..4)."""

VerifyMode = Literal["off", "report", "fix"]
"""``off``: no verification; ``report``: attach the verdict to the next request; ``fix``: also
nudge the model once per round when a turn ends with new errors."""


class _Settings(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )


class SourceFilter(_Settings):
    """Per-source settings, keyed by a channel name (a managed server's ``name``, or
    ``"editor"``) or by a diagnostic ``source`` label (``"Ruff"``, ``"Pylance"``).

    ``enabled: false`` drops the source from verification (its diagnostics are neither shown
    nor waited for). ``minSeverity`` overrides the global threshold. ``ignoreCodes`` drops
    diagnostics with these codes.
    """

    enabled: bool = True
    min_severity: SeverityName | None = None
    ignore_codes: tuple[str, ...] = ()


class VerifyConfig(_Settings):
    """How the agent checks its own edits (see docs/verification.md).

    ``timeoutMs`` caps the wait for diagnostics after a batch of edits (from the end of the
    batch); ``quietMs`` is the settle window: after every expected source has reported for
    the new text, how long no further report may arrive before the result counts as settled
    (only push-based sources need it). ``minSeverity`` is the lowest severity reported to the
    model. ``maxRounds`` bounds the fix nudges per prompt in ``fix`` mode. ``maxListed`` bounds
    the diagnostics listed per attachment (the rest are counted).
    """

    mode: VerifyMode = "report"
    timeout_ms: int = Field(default=3000, ge=0, le=120_000)
    quiet_ms: int = Field(default=150, ge=0, le=10_000)
    min_severity: SeverityName = "warning"
    max_rounds: int = Field(default=2, ge=0, le=10)
    max_listed: int = Field(default=20, ge=1, le=500)
    sources: dict[str, SourceFilter] = Field(default_factory=dict)

    def filter_for(self, channel: str, source: str) -> SourceFilter | None:
        """The filter that applies to a diagnostic: by its ``source`` label first, then by
        the channel it came through; ``None`` when neither has one."""
        return self.sources.get(source) or self.sources.get(channel)


class ManagedServerConfig(_Settings):
    """One language server the agent starts itself, as an LSP client.

    ``command`` is the argv (``["ruff", "server"]``); ``filetypes`` are file-name globs
    (``["*.py", "*.pyi"]``) deciding which documents it serves; ``languageId`` is sent in
    ``didOpen``. ``initializationOptions`` is passed through; ``settings`` answers
    ``workspace/configuration`` (a section ``a.b`` is looked up as nested keys, a missing one
    is ``null``). ``diagnostics``: ``auto`` pulls (``textDocument/diagnostic``) when the server
    offers it, else waits for pushed ``publishDiagnostics``. ``startTimeoutMs`` bounds
    ``initialize``; ``requestTimeoutMs`` bounds other requests; a server that crashes is
    restarted on next use after a backoff (0.5 s doubling up to 30 s), at most ``maxRestarts``
    times. ``maxOpenDocuments`` bounds the documents kept open in it.
    """

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    command: tuple[str, ...] = Field(min_length=1)
    filetypes: tuple[str, ...] = Field(min_length=1)
    language_id: str = "plaintext"
    env: dict[str, str] = Field(default_factory=dict)
    initialization_options: Any = None
    settings: Any = None
    diagnostics: Literal["auto", "pull", "push"] = "auto"
    start_timeout_ms: int = Field(default=10_000, gt=0)
    request_timeout_ms: int = Field(default=5_000, gt=0)
    max_restarts: int = Field(default=5, ge=0)
    max_open_documents: int = Field(default=200, ge=1)

    @field_validator("command")
    @classmethod
    def _no_empty_words(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value[0]:
            raise ValueError("the program name must not be empty")
        return value


class SuggestConfig(_Settings):
    """Proactive fix suggestions (LSP door only; off by default).

    When an error diagnostic persists unchanged for ``delayMs``, a fix is computed in the
    background (one at a time per document, at most one start per ``minIntervalMs`` overall)
    and offered as a preferred quick fix; it is never applied without the user's action.
    """

    enabled: bool = False
    delay_ms: int = Field(default=4000, ge=0)
    min_interval_ms: int = Field(default=20_000, ge=0)
    timeout_ms: int = Field(default=60_000, gt=0)


class DiagnosticsSettings(_Settings):
    """Everything under ``diagnostics`` in the settings.

    ``maxDocuments`` bounds the documents the store remembers (least recently updated are
    forgotten first); ``maxPerReport`` bounds the diagnostics kept from one report (the most
    severe are kept); ``reportsPerSource`` bounds the reports kept per document and source.
    """

    verify: VerifyConfig = VerifyConfig()
    servers: tuple[ManagedServerConfig, ...] = ()
    suggestions: SuggestConfig = SuggestConfig()
    max_documents: int = Field(default=2000, ge=1)
    max_per_report: int = Field(default=500, ge=1)
    reports_per_source: int = Field(default=8, ge=2)

    @field_validator("servers")
    @classmethod
    def _unique_names(
        cls, value: tuple[ManagedServerConfig, ...]
    ) -> tuple[ManagedServerConfig, ...]:
        names = [server.name for server in value]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate server names: {', '.join(duplicates)}")
        if "editor" in names:
            raise ValueError("'editor' is reserved for the editor bridge")
        return value


class SettingsError(ValueError):
    """Settings that do not match the schema; the message names each bad field."""


def parse_settings(raw: Any, *, where: str = "diagnostics") -> DiagnosticsSettings:
    """Validate ``raw`` (JSON data; ``None`` gives the defaults).

    Raises :class:`SettingsError` whose message names every bad field as ``<where>.<path>``.
    """
    if raw is None:
        return DiagnosticsSettings()
    try:
        return DiagnosticsSettings.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            path = ".".join(str(p) for p in err["loc"])
            problems.append(f"{where}.{path}: {err['msg']}" if path else f"{where}: {err['msg']}")
        raise SettingsError("; ".join(problems)) from None
