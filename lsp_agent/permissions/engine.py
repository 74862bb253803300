"""The permission engine: the one gate every tool call passes.

Decision order (deny beats ask beats allow): a ``--disallowedTools`` rule or a session
"reject always" denies; ``plan`` mode denies anything that is not read-only; an
``--allowedTools`` rule or a session "allow always" allows; ``bypassPermissions`` allows;
read-only tools inside the session roots are allowed; in ``acceptEdits`` mode edits inside the
roots are allowed; everything else asks. Headless doors turn "ask" into "deny".

Rules use Claude Code's grammar: ``Tool`` matches every call of a tool, ``Bash(npm test)``
matches that exact command, ``Bash(npm run test:*)`` matches commands whose words start with
``npm run test``, and ``Edit(src/**)``-style specifiers match file paths with shell globs.
(The full grammar, path sandbox and shell analysis are in the permissions issue.)
"""

from __future__ import annotations

import fnmatch
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lsp_agent.permissions.types import PermissionMode

Behavior = Literal["allow", "ask", "deny"]


@dataclass(frozen=True, kw_only=True)
class Decision:
    """What the engine decided, which rule decided it and where that rule came from."""

    behavior: Behavior
    reason: str
    rule: str | None = None
    source: str | None = None


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One parsed rule: ``tool`` and an optional ``specifier`` (text inside the parentheses)."""

    tool: str
    specifier: str | None = None

    @classmethod
    def parse(cls, text: str) -> Rule:
        """Parse ``Tool`` or ``Tool(specifier)``; raises ``ValueError`` on malformed text."""
        text = text.strip()
        if "(" not in text:
            if not text or not text.replace("_", "").replace("-", "").isalnum():
                raise ValueError(f"malformed permission rule: {text!r}")
            return cls(tool=text)
        if not text.endswith(")"):
            raise ValueError(f"malformed permission rule (missing ')'): {text!r}")
        name, _, rest = text.partition("(")
        return cls(tool=name.strip(), specifier=rest[:-1].strip())

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    def matches(self, *, tool: str, command: str | None, paths: Sequence[Path]) -> bool:
        """Whether this rule covers a call of ``tool`` (with its Bash ``command`` or ``paths``)."""
        if self.tool != tool:
            return False
        if self.specifier is None or self.specifier in ("", "*"):
            return True
        if command is not None:
            return _command_matches(self.specifier, command)
        return bool(paths) and all(
            fnmatch.fnmatch(str(p), self.specifier) or fnmatch.fnmatch(p.name, self.specifier)
            for p in paths
        )


def _command_matches(specifier: str, command: str) -> bool:
    if specifier.endswith(":*"):
        try:
            want, have = shlex.split(specifier[:-2]), shlex.split(command)
        except ValueError:
            return False
        # Whole words only, and never across a compound command.
        if any(op in command for op in ("&&", "||", ";", "|", "`", "$(", "\n", ">", "<")):
            return False
        return have[: len(want)] == want
    return specifier == command


def parse_rules(texts: Sequence[str]) -> tuple[Rule, ...]:
    """Parse rule strings; raises ``ValueError`` naming the first malformed one."""
    return tuple(Rule.parse(t) for t in texts if t.strip())


def is_within(path: Path, roots: Sequence[Path]) -> bool:
    """Containment by path components (never string prefix) after resolving symlinks/``..``."""
    resolved = path.resolve()
    return any(resolved == root or root in resolved.parents for root in roots)


@dataclass(kw_only=True)
class PermissionEngine:
    """Decides tool calls for one session. ``mode`` can change during the session."""

    mode: PermissionMode
    roots: tuple[Path, ...]
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    headless: bool = False
    session_allow: list[Rule] = field(default_factory=list)
    session_deny: list[Rule] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._allow = parse_rules(self.allowed_tools)
        self._deny = parse_rules(self.disallowed_tools)

    def decide(
        self,
        *,
        tool: str,
        read_only: bool,
        kind: str,
        paths: Sequence[Path],
        raw_input: dict[str, Any],
    ) -> Decision:
        """Decide one call. ``paths`` are the absolute files it touches; ``raw_input`` is
        the validated input (``command`` is read from it for Bash)."""
        command = raw_input.get("command") if tool == "Bash" else None
        command = command if isinstance(command, str) else None
        inside = all(is_within(p, self.roots) for p in paths)

        for rule in self._deny:
            if rule.matches(tool=tool, command=command, paths=paths):
                return Decision(
                    behavior="deny", reason=f"denied by rule {rule}", rule=str(rule), source="cli"
                )
        for rule in self.session_deny:
            if rule.matches(tool=tool, command=command, paths=paths):
                return Decision(
                    behavior="deny",
                    reason="you rejected this for the session",
                    rule=str(rule),
                    source="session",
                )
        if self.mode == "plan" and not read_only:
            return Decision(
                behavior="deny", reason="plan mode allows read-only tools only", source="mode"
            )
        for rule in self._allow:
            if rule.matches(tool=tool, command=command, paths=paths):
                return Decision(
                    behavior="allow", reason=f"allowed by rule {rule}", rule=str(rule), source="cli"
                )
        for rule in self.session_allow:
            if rule.matches(tool=tool, command=command, paths=paths):
                return Decision(
                    behavior="allow",
                    reason="you allowed this for the session",
                    rule=str(rule),
                    source="session",
                )
        if self.mode == "bypassPermissions":
            return Decision(behavior="allow", reason="bypassPermissions mode", source="mode")
        if read_only:
            if inside:
                return Decision(behavior="allow", reason="read-only tool", source="default")
            return Decision(
                behavior="ask", reason="reads a file outside the workspace roots", source="default"
            )
        if self.mode == "acceptEdits" and kind == "edit" and paths and inside:
            return Decision(
                behavior="allow", reason="acceptEdits mode: edit inside the roots", source="mode"
            )
        what = (
            "edits a file outside the workspace roots"
            if paths and not inside
            else (
                "changes files"
                if kind == "edit"
                else "runs a command"
                if tool == "Bash"
                else "is not read-only"
            )
        )
        return Decision(behavior="ask", reason=f"{tool} {what}", source="default")

    def remember(self, *, tool: str, raw_input: dict[str, Any], allow: bool) -> Rule:
        """Record an "always" answer for the rest of the session; returns the rule written
        (the narrowest sensible one: the exact Bash command, else the tool)."""
        command = raw_input.get("command") if tool == "Bash" else None
        rule = Rule(tool=tool, specifier=command if isinstance(command, str) else None)
        (self.session_allow if allow else self.session_deny).append(rule)
        return rule
