"""What the settings files contribute to permission decisions, as one immutable value.

The config layer (:mod:`lsp_agent.config`) builds a :class:`Policy` from the merged settings;
the engine asks its provider for the current one on every decision, so a settings reload takes
effect at the next tool call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lsp_agent.permissions.rules import Rule
from lsp_agent.protocol.permissions import PermissionMode


@dataclass(frozen=True, kw_only=True)
class Policy:
    """Rules and switches from settings.

    ``rules`` are allow/ask/deny rules from every settings layer (each knows its source);
    ``disable_bypass`` is the managed ``permissions.disableBypassPermissionsMode: "disable"``;
    ``trusted`` says the user trusts the workspace (repository-controlled settings, hooks and
    git's repository config are honoured only then); ``additional_roots`` come from
    ``permissions.additionalDirectories``; ``default_mode`` from ``permissions.defaultMode``.
    """

    rules: tuple[Rule, ...] = ()
    disable_bypass: bool = False
    trusted: bool = True
    additional_roots: tuple[Path, ...] = ()
    default_mode: PermissionMode | None = None


PolicyProvider = Callable[[], Policy]
"""Returns the policy in force now (cheap: called on every decision)."""
