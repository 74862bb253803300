"""The permission engine: the one gate every tool call passes.

Order of a decision (deny beats ask beats allow, across every source):

1. A **deny** rule that matches (managed, CLI, settings files, session "reject always") denies.
   For Bash every simple command of the parsed command line is checked, including commands
   inside substitutions, ``bash -c '...'`` strings and wrappers (``timeout 5 rm`` is ``rm``);
   ``Edit`` deny rules also cover output redirections and ``Read`` deny rules the files that
   read-only commands read.
2. An **ask** rule that matches asks; an allow rule cannot override it (a managed ask stays an
   ask whatever the user allowed).
3. ``plan`` mode denies anything that is not provably read-only.
4. The **sandbox** asks before writing a protected path (``.git/``, ``.claude/settings*``,
   ``.mcp.json``, shell rc files, ``.env*``, ``~/.ssh``) — in every mode, whatever allows it —
   and before reading secrets or anything outside the roots unless a path rule allows it.
5. An **allow** rule that matches allows (a tool-wide rule like ``Edit`` only inside the roots).
6. ``bypassPermissions`` allows (unless managed policy disabled that mode).
7. Defaults: read-only tools and provably read-only shell commands inside the roots are
   allowed; in ``acceptEdits`` edits inside the roots are allowed; everything else asks.
8. ``dontAsk`` (Claude Code's mode for unattended use) turns every ask of steps 2-7 into a
   denial: only what is allowed without asking runs, and nobody is prompted.

Every :class:`Decision` names the rule and source that decided it, and says whether a
PreToolUse hook's "allow" may turn its "ask" into an allow (``hard=False``: only the default
"this changes things" ask; never a rule's, the sandbox's or an unanalysable command's).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from lsp_agent.permissions.decision import Behavior, Decision, Grounds, RefusalError
from lsp_agent.permissions.paths import is_within, resolve
from lsp_agent.permissions.policy import Policy, PolicyProvider
from lsp_agent.permissions.rules import (
    Rule,
    RuleBehavior,
    RuleOrigin,
    RuleSyntaxError,
    parse_rule,
    parse_rules,
)
from lsp_agent.permissions.tool_decisions import decide_tool
from lsp_agent.protocol.permissions import PermissionMode, RuleScope

if TYPE_CHECKING:
    from lsp_agent.permissions.shell import ShellAnalyzer

# The shell analysis (Bash decisions, Bash rule suggestions) is imported with the first Bash
# call or suggestion, not with the engine: a session's first model request needs neither.

log = logging.getLogger(__name__)

__all__ = ["Behavior", "Decision", "PermissionEngine", "Rule", "is_within", "parse_rules"]


def dont_ask(decision: Decision) -> Decision:
    """The denial ``dontAsk`` mode makes of an ``ask`` (Claude Code: "auto-denies tools unless
    pre-approved via permissions.allow rules"); it keeps the rule and suggestions that asked,
    so the reason says what would have allowed the call."""
    return Decision(
        behavior="deny",
        # The reason may be a sentence (plain_reason): no full stop inside the parenthesis.
        reason=f"dontAsk mode denies what no rule allows ({decision.reason.rstrip('.')})",
        rule=decision.rule,
        source="mode",
        hard=True,
        suggestions=decision.suggestions,
        can_allow_always=decision.can_allow_always,
    )


@dataclass(kw_only=True)
class PermissionEngine:
    """Decides tool calls for one session; see the module docstring.

    ``roots`` are the resolved directories the session may touch (cwd first); ``cwd`` defaults
    to the first root. ``allowed_tools``/``disallowed_tools`` are ``--allowedTools`` /
    ``--disallowedTools`` rules (source ``cli``). ``policy`` supplies the settings files' rules
    (reloaded settings take effect at the next call). ``persist`` writes "always" rules to a
    settings file: ``persist(scope, behavior, rules)``; it raises ``OSError`` or ``ValueError``
    when it cannot. ``trusted`` is used when there is no ``policy``.
    """

    mode: PermissionMode
    roots: tuple[Path, ...]
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    cwd: Path | None = None
    home: Path | None = None
    policy: PolicyProvider | None = None
    trusted: bool = True
    persist: Callable[[RuleScope, RuleBehavior, Sequence[str]], None] | None = None
    session_rules: list[Rule] = field(default_factory=list)
    auto_memory: Path | None = None
    """The current project's auto-memory folder (``~/.claude/projects/<project>/memory``):
    the only place under ``~/.claude`` exempt from the sensitive-path rule; it counts as a
    root, so writes there follow the mode like project files (asking with their diff in
    ``default``)."""

    def __post_init__(self) -> None:
        self.roots = tuple(resolve(r) for r in self.roots)
        self.cwd = resolve(self.cwd) if self.cwd is not None else self.roots[0]
        self.home = self.home or Path.home()
        self.auto_memory = resolve(self.auto_memory) if self.auto_memory is not None else None
        origin = RuleOrigin(source="cli", settings_root=self.cwd, cwd=self.cwd, home=self.home)
        self._cli_rules = (
            *parse_rules(self.disallowed_tools, behavior="deny", origin=origin),
            *parse_rules(self.allowed_tools, behavior="allow", origin=origin),
        )
        self._shell_analyzer: ShellAnalyzer | None = None
        self._last_grounds: tuple[tuple[object, ...], Grounds] | None = None

    def _shell(self) -> ShellAnalyzer:
        """The session's shell analyzer, made on first use."""
        if self._shell_analyzer is None:
            from lsp_agent.permissions.shell import ShellAnalyzer

            self._shell_analyzer = ShellAnalyzer(
                home=self.home or Path.home(), cdpath=os.environ.get("CDPATH") or None
            )
        return self._shell_analyzer

    # -- state -----------------------------------------------------------------------------

    def current_policy(self) -> Policy:
        """The settings policy in force (an empty one without a provider)."""
        if self.policy is None:
            return Policy(trusted=self.trusted)
        try:
            return self.policy()
        except Exception:  # a broken provider must not open the gate: fall back to nothing
            log.exception("permission policy provider failed; using no settings rules")
            return Policy(trusted=False)

    def all_roots(self, policy: Policy | None = None) -> tuple[Path, ...]:
        """Session roots plus ``additionalDirectories`` from settings."""
        extra = (policy or self.current_policy()).additional_roots
        memory = (self.auto_memory,) if self.auto_memory is not None else ()
        return tuple(dict.fromkeys([*self.roots, *(resolve(p) for p in extra), *memory]))

    def effective_mode(self, policy: Policy | None = None) -> PermissionMode:
        """The mode decisions use: ``bypassPermissions`` counts as ``default`` when managed
        policy disabled it."""
        policy = policy or self.current_policy()
        if self.mode == "bypassPermissions" and policy.disable_bypass:
            return "default"
        return self.mode

    def available_modes(self) -> tuple[PermissionMode, ...]:
        """The modes a user may switch to (without ``bypassPermissions`` when disabled)."""
        modes: tuple[PermissionMode, ...] = (
            "default",
            "acceptEdits",
            "plan",
            "bypassPermissions",
            "dontAsk",
        )
        if self.current_policy().disable_bypass:
            return tuple(m for m in modes if m != "bypassPermissions")
        return modes

    def _rules(self, policy: Policy, behavior: RuleBehavior) -> list[Rule]:
        every = (*policy.rules, *self._cli_rules, *self.session_rules)
        return [r for r in every if r.behavior == behavior]

    # -- decisions ---------------------------------------------------------------------------

    def _grounds(self, policy: Policy) -> Grounds:
        """What a decision reads, built again only when something it is built from changed:
        the policy (the same object while the settings are), the mode, the session rules
        (a list that grows), the roots, cwd, home and auto-memory folder. Not kept while
        settings add folders: their real paths are resolved at every decision."""
        if policy.additional_roots:
            return self._build_grounds(policy)
        key = (
            policy,
            self.mode,
            tuple(self.session_rules),
            self.roots,
            self.cwd,
            self.home,
            self.auto_memory,
        )
        last = self._last_grounds
        if last is not None and last[0] == key:
            return last[1]
        grounds = self._build_grounds(policy)
        self._last_grounds = (key, grounds)
        return grounds

    def _build_grounds(self, policy: Policy) -> Grounds:
        assert self.cwd is not None and self.home is not None
        return Grounds(
            deny=tuple(self._rules(policy, "deny")),
            ask=tuple(self._rules(policy, "ask")),
            allow=tuple(self._rules(policy, "allow")),
            roots=self.all_roots(policy),
            mode=self.effective_mode(policy),
            cwd=self.cwd,
            home=self.home,
            trusted=policy.trusted,
            exempt=(self.auto_memory,) if self.auto_memory is not None else (),
        )

    # -- decisions ---------------------------------------------------------------------------

    def decide(
        self,
        *,
        tool: str,
        read_only: bool,
        kind: str,
        paths: Sequence[Path],
        raw_input: dict[str, Any],
        resolved: bool = False,
    ) -> Decision:
        """Decide one call. ``paths`` are the absolute files it touches (from ``prepare``);
        ``raw_input`` is the validated input (``command`` for Bash, ``url`` for WebFetch);
        ``resolved``: ``paths`` are what ``Path.resolve`` gave just before (the files the call
        will open), so they are decided on as they are instead of being resolved again."""
        policy = self.current_policy()
        grounds = self._grounds(policy)
        try:
            if tool == "Bash":
                command = raw_input.get("command")
                if not isinstance(command, str):
                    decision = Decision(
                        behavior="ask", reason="Bash call without a command", hard=True
                    )
                else:
                    from lsp_agent.permissions.bash_decisions import decide_bash

                    decision = decide_bash(command, shell=self._shell(), grounds=grounds)
            else:
                decision = decide_tool(
                    grounds,
                    tool=tool,
                    read_only=read_only,
                    kind=kind,
                    paths=paths,
                    raw_input=raw_input,
                    paths_resolved=resolved,
                )
        except RefusalError as refusal:
            decision = refusal.decision
        if decision.behavior == "ask" and grounds.mode == "dontAsk":
            return dont_ask(decision)
        return decision

    def approved(self, *, tool: str, raw_input: dict[str, Any], paths: Sequence[Path]) -> Self:
        """A copy of this engine that allows this one call the user already approved in
        another question (a ``# note``'s choice of memory file), through session allow rules
        (:meth:`suggest`): deny and ask rules, ``plan`` mode and the sandbox's protected paths
        decide first as for any allow rule. This engine is unchanged."""
        rules = self.suggest(tool=tool, raw_input=raw_input, paths=paths)
        assert self.cwd is not None and self.home is not None
        origin = RuleOrigin(source="session", settings_root=self.cwd, cwd=self.cwd, home=self.home)
        extra = parse_rules(rules, behavior="allow", origin=origin)
        return dataclasses.replace(self, session_rules=[*self.session_rules, *extra])

    # -- suggestions and memory ------------------------------------------------------------

    def suggest(
        self, *, tool: str, raw_input: dict[str, Any], paths: Sequence[Path] = ()
    ) -> tuple[str, ...]:
        """The narrowest rules that would cover this call (for "always" answers)."""
        if tool == "Bash":
            command = raw_input.get("command")
            if not isinstance(command, str):
                return ()
            from lsp_agent.permissions.bash_units import units_of
            from lsp_agent.permissions.suggestions import bash_suggestions

            shell = self._shell()
            units, _ = units_of(shell.analyze(command, cwd=self.cwd), shell)
            return bash_suggestions(units)
        from lsp_agent.permissions.suggestions import tool_suggestions

        return tool_suggestions(tool, [resolve(p, cwd=self.cwd) for p in paths], raw_input)

    def remember(
        self,
        *,
        tool: str,
        raw_input: dict[str, Any],
        allow: bool,
        scope: RuleScope = "session",
        rules: Sequence[str] | None = None,
        paths: Sequence[Path] = (),
    ) -> tuple[Rule, ...]:
        """Record an "always" answer: ``rules`` (default: :meth:`suggest`) become session
        rules at once and, for ``project``/``user`` scope, are written to that settings file
        through ``persist`` (failures are logged; the session rules stay). Returns the rules.

        Without a rule to save nothing is remembered: the bare tool name (every call of the
        tool) is never made up here; a prompt offers "always" only with the rules it saves
        (:meth:`Decision.prompt_options`)."""
        texts = (
            list(rules)
            if rules
            else list(self.suggest(tool=tool, raw_input=raw_input, paths=paths))
        )
        if not texts:
            log.warning("no rule covers this %s call; the always answer is not remembered", tool)
            return ()
        assert self.cwd is not None and self.home is not None
        origin = RuleOrigin(source="session", settings_root=self.cwd, cwd=self.cwd, home=self.home)
        behavior: RuleBehavior = "allow" if allow else "deny"
        parsed: list[Rule] = []
        for text in texts:
            try:
                parsed.append(parse_rule(text, behavior=behavior, origin=origin))
            except RuleSyntaxError:
                log.warning("not remembering malformed rule %r", text)
        self.session_rules.extend(parsed)
        if scope != "session" and self.persist is not None and parsed:
            try:
                self.persist(scope, behavior, [r.text for r in parsed])
            except (OSError, ValueError) as exc:
                log.warning("could not save %s rules to %s settings: %s", behavior, scope, exc)
        return tuple(parsed)


# -- helpers ---------------------------------------------------------------------------------
