"""A permission decision, the grounds it is made on, and how a rule's verdict is phrased.

:class:`Decision` is what the engine answers for one tool call; :class:`Grounds` is everything
a decision reads (rules by behaviour, roots, mode, directories), fixed when the decision starts
so that tool and Bash decisions are pure functions of it. Imports only rule and path helpers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lsp_agent.permissions.rules import Rule, RuleBehavior
from lsp_agent.protocol.permissions import DEFAULT_OPTIONS, PermissionMode, PermissionOption

Behavior = Literal["allow", "ask", "deny"]


@dataclass(frozen=True, kw_only=True)
class Decision:
    """What the engine decided and why.

    ``rule``/``source`` name the rule and its settings layer when a rule decided (``source``
    is also ``mode``, ``sandbox`` or ``default``). ``hard`` asks cannot be turned into allows by
    a hook. ``suggestions`` are the narrowest rules that would cover the call (offered for
    "always" answers); ``can_allow_always`` is false when an allow rule would not help (an ask
    rule or the sandbox asked).
    """

    behavior: Behavior
    reason: str
    rule: str | None = None
    source: str | None = None
    hard: bool = False
    suggestions: tuple[str, ...] = ()
    can_allow_always: bool = True

    def decided_by(self) -> str:
        """What decided, in the user's words, for the log (``--verbose``): ``rule Bash(make)``
        when a rule matched (the reason already names its settings layer), else what decided
        without one (``no rule matched; default for this mode``)."""
        if self.rule is not None:
            return f"rule {self.rule}"
        match self.source:
            case "default":
                return "no rule matched; default for this mode"
            case "mode":
                return "no rule matched; the permission mode decided"
            case "sandbox":
                return "the workspace's safety checks decided"
            case "hook":
                return "a hook decided"
            case _:
                return "no rule matched"

    def prompt_options(self) -> tuple[PermissionOption, ...]:
        """The options of the prompt for this ask. "Always" answers are offered only with the
        exact rules they save (``suggestions``, sent as ``suggestedRules``): without them an
        "always" answer would save a rule the user never saw. "Always allow" also needs
        ``can_allow_always``."""
        kinds = {"allow_once", "reject_once"}
        if self.suggestions:
            kinds.add("reject_always")
            if self.can_allow_always:
                kinds.add("allow_always")
        return tuple(option for option in DEFAULT_OPTIONS if option.kind in kinds)


class RefusalError(Exception):
    """A definite answer found while walking a command; :attr:`decision` is the answer."""

    def __init__(self, decision: Decision) -> None:
        super().__init__(decision.reason)
        self.decision = decision


@dataclass(frozen=True, kw_only=True)
class Grounds:
    """What one decision reads. ``deny``/``ask``/``allow`` are the rules of that behaviour from
    every source in precedence-neutral order (settings layers, then ``--allowedTools`` /
    ``--disallowedTools``, then session answers); ``roots`` the resolved workspace roots
    (session roots plus ``additionalDirectories``); ``mode`` the effective mode; ``trusted``
    whether the workspace is trusted (git is read-only only there)."""

    deny: tuple[Rule, ...]
    ask: tuple[Rule, ...]
    allow: tuple[Rule, ...]
    roots: tuple[Path, ...]
    mode: PermissionMode
    cwd: Path
    home: Path
    trusted: bool
    exempt: tuple[Path, ...] = ()
    """Folders exempt from the sensitive-path rule (the project's auto-memory folder)."""

    def rules(self, behavior: RuleBehavior) -> tuple[Rule, ...]:
        """The rules of one behaviour."""
        if behavior == "deny":
            return self.deny
        if behavior == "ask":
            return self.ask
        return self.allow


def by_rule(
    behavior: Behavior, rule: Rule, reason: str, suggestions: tuple[str, ...] = ()
) -> Decision:
    """The decision a matching ``rule`` makes, its reason naming where the rule came from. An
    ask by rule is hard and cannot be answered "always allow" (an allow rule would not help)."""
    where = {
        "cli": "--allowedTools/--disallowedTools",
        "session": "your answer earlier in this session",
    }.get(rule.source, f"{rule.source} settings")
    if rule.origin.broken:
        # Not a rule anyone wrote: say which file is broken, not which stand-in rule matched.
        broken = rule.origin.file or f"the {rule.source} settings file"
        return Decision(
            behavior=behavior,
            reason=f"{broken} has errors, so every change asks until it is fixed",
            rule=rule.text,
            source=rule.source,
            hard=True,
            suggestions=suggestions,
            can_allow_always=False,
        )
    return Decision(
        behavior=behavior,
        reason=f"{reason} ({where})",
        rule=rule.text,
        source=rule.source,
        hard=behavior == "ask",
        suggestions=suggestions,
        can_allow_always=behavior != "ask",
    )


def inside(path: Path, roots: Sequence[Path]) -> bool:
    """Whether resolved ``path`` is one of ``roots`` or below one (compared part by part)."""
    parts = path.parts
    return any(parts[: len(r.parts)] == r.parts for r in roots)


def short(text: str, limit: int = 80) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"
