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

Every :class:`Decision` names the rule and source that decided it, and says whether a
PreToolUse hook's "allow" may turn its "ask" into an allow (``hard=False``: only the default
"this changes things" ask; never a rule's, the sandbox's or an unanalysable command's).
"""

from __future__ import annotations

import glob as globlib
import logging
import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lsp_agent.permissions.paths import fold, is_secret, is_sensitive, is_within, resolve
from lsp_agent.permissions.policy import Policy, PolicyProvider
from lsp_agent.permissions.readonly import (
    DYNAMIC_ARGS_OK,
    SAFE_ENV_ASSIGNMENTS,
    Verdict,
    check_read_only,
    secret_variable,
)
from lsp_agent.permissions.rules import (
    EDIT_TOOLS,
    CommandView,
    Rule,
    RuleBehavior,
    RuleOrigin,
    RuleSyntaxError,
    parse_rule,
    parse_rules,
    quote_words,
)
from lsp_agent.permissions.shell import Analysis, Redirect, ShellAnalyzer, SimpleCommand, Word
from lsp_agent.protocol.permissions import (
    DEFAULT_OPTIONS,
    PermissionMode,
    PermissionOption,
    RuleScope,
)

log = logging.getLogger(__name__)

Behavior = Literal["allow", "ask", "deny"]

__all__ = ["Behavior", "Decision", "PermissionEngine", "Rule", "is_within", "parse_rules"]

MAX_GLOB_MATCHES = 256
"""A glob with more matches than this is not expanded; the command asks."""

MAX_NESTED_SHELL = 4
"""How deep ``bash -c '...'`` strings are analysed."""

DEV_READ_OK = ("/dev/null", "/dev/stdin", "/dev/zero", "/dev/urandom", "/dev/random")
DEV_WRITE_OK = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2")

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "exec",
        "nohup",
        "setsid",
        "builtin",
        "command",
        "env",
        "timeout",
        "nice",
        "time",
        "stdbuf",
        "xargs",
        "ionice",
        "chrt",
        "taskset",
        "watch",
        "flock",
        "unbuffer",
        "then",
        "do",
        "else",
    }
)
"""Commands that run another command (for deny/ask matching, the inner command counts too)."""

SUBCOMMAND_TOOLS = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "cargo",
        "go",
        "docker",
        "kubectl",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "gh",
        "dotnet",
        "mvn",
        "gradle",
        "helm",
        "terraform",
        "brew",
        "apt",
        "apt-get",
        "conda",
        "rustup",
        "deno",
        "nx",
        "bundle",
        "rails",
        "mix",
        "composer",
    }
)
"""Programs whose second word is a sub-command: "always" rules are ``Bash(git commit:*)``."""


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


@dataclass(frozen=True, kw_only=True)
class _Unit:
    """One simple command as the engine judges it."""

    cmd: SimpleCommand
    nested: bool = False


class _RefusalError(Exception):
    """Internal: a definite answer found while walking a command."""

    def __init__(self, decision: Decision) -> None:
        super().__init__(decision.reason)
        self.decision = decision


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
    headless: bool = False
    cwd: Path | None = None
    home: Path | None = None
    policy: PolicyProvider | None = None
    trusted: bool = True
    persist: Callable[[RuleScope, RuleBehavior, Sequence[str]], None] | None = None
    session_rules: list[Rule] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.roots = tuple(resolve(r) for r in self.roots)
        self.cwd = resolve(self.cwd) if self.cwd is not None else self.roots[0]
        self.home = self.home or Path.home()
        origin = RuleOrigin(source="cli", settings_root=self.cwd, cwd=self.cwd, home=self.home)
        self._cli_rules = (
            *parse_rules(self.disallowed_tools, behavior="deny", origin=origin),
            *parse_rules(self.allowed_tools, behavior="allow", origin=origin),
        )
        self._shell = ShellAnalyzer(home=self.home, cdpath=os.environ.get("CDPATH") or None)

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
        return tuple(dict.fromkeys([*self.roots, *(resolve(p) for p in extra)]))

    def effective_mode(self, policy: Policy | None = None) -> PermissionMode:
        """The mode decisions use: ``bypassPermissions`` counts as ``default`` when managed
        policy disabled it."""
        policy = policy or self.current_policy()
        if self.mode == "bypassPermissions" and policy.disable_bypass:
            return "default"
        return self.mode

    def available_modes(self) -> tuple[PermissionMode, ...]:
        """The modes a user may switch to (without ``bypassPermissions`` when disabled)."""
        modes: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")
        if self.current_policy().disable_bypass:
            return modes[:3]
        return modes

    def _rules(self, policy: Policy, behavior: RuleBehavior) -> list[Rule]:
        every = (*policy.rules, *self._cli_rules, *self.session_rules)
        return [r for r in every if r.behavior == behavior]

    # -- decisions ---------------------------------------------------------------------------

    def decide(
        self,
        *,
        tool: str,
        read_only: bool,
        kind: str,
        paths: Sequence[Path],
        raw_input: dict[str, Any],
    ) -> Decision:
        """Decide one call. ``paths`` are the absolute files it touches (from ``prepare``);
        ``raw_input`` is the validated input (``command`` for Bash, ``url`` for WebFetch)."""
        policy = self.current_policy()
        try:
            if tool == "Bash":
                command = raw_input.get("command")
                if not isinstance(command, str):
                    return Decision(behavior="ask", reason="Bash call without a command", hard=True)
                return self._decide_bash(command, policy)
            return self._decide_tool(
                tool=tool,
                read_only=read_only,
                kind=kind,
                paths=paths,
                raw_input=raw_input,
                policy=policy,
            )
        except _RefusalError as refusal:
            return refusal.decision

    def _decide_tool(
        self,
        *,
        tool: str,
        read_only: bool,
        kind: str,
        paths: Sequence[Path],
        raw_input: dict[str, Any],
        policy: Policy,
    ) -> Decision:
        assert self.home is not None
        resolved = [resolve(p, cwd=self.cwd) for p in paths]
        candidates = [*resolved, *(p for p in paths if p.is_absolute() and p not in resolved)]
        roots = self.all_roots(policy)
        suggestions = self._tool_suggestions(tool, resolved, raw_input)

        def hits(rule: Rule, *, loose: bool) -> bool:
            if not rule.covers_tool(tool):
                return False
            if rule.kind in ("tool", "mcp"):
                return True
            if rule.kind == "path":
                pool = candidates if loose else resolved
                if not pool:
                    return False
                return (
                    any(map(rule.matches_path, pool))
                    if loose
                    else all(map(rule.matches_path, pool))
                )
            if rule.kind == "domain":
                url = raw_input.get("url")
                return isinstance(url, str) and rule.matches_url(url)
            if rule.kind == "name":
                return rule.matches_input(raw_input)
            return False

        for rule in self._rules(policy, "deny"):
            if hits(rule, loose=True):
                return _by_rule("deny", rule, f"{tool} is denied by the rule {rule}")
        for rule in self._rules(policy, "ask"):
            if hits(rule, loose=True):
                return _by_rule("ask", rule, f"the rule {rule} asks before {tool}", suggestions)
        mode = self.effective_mode(policy)
        if mode == "plan" and not read_only:
            return Decision(
                behavior="deny",
                reason=f"plan mode allows read-only tools only ({tool} is not)",
                source="mode",
            )
        writes = not read_only and bool(resolved)
        if writes:
            for path in resolved:
                why = is_sensitive(path, home=self.home)
                if why:
                    return Decision(
                        behavior="ask",
                        reason=f"{tool} writes {path}: {why}",
                        source="sandbox",
                        hard=True,
                        suggestions=suggestions,
                        can_allow_always=False,
                    )
        outside = [p for p in resolved if not _inside(p, roots)]
        secrets = [p for p in resolved if read_only and is_secret(p, home=self.home)]
        for rule in self._rules(policy, "allow"):
            if not hits(rule, loose=False):
                continue
            if rule.kind == "tool" and (outside or secrets):
                continue  # a tool-wide rule does not reach outside the roots or into secrets
            return _by_rule("allow", rule, f"allowed by the rule {rule}")
        if mode == "bypassPermissions":
            return Decision(behavior="allow", reason="bypassPermissions mode", source="mode")
        if outside:
            verb = "reads" if read_only else "writes"
            return Decision(
                behavior="ask",
                reason=f"{tool} {verb} {outside[0]}, outside the workspace roots",
                source="sandbox",
                hard=True,
                suggestions=suggestions,
            )
        if secrets:
            why = is_secret(secrets[0], home=self.home)
            return Decision(
                behavior="ask",
                reason=f"{tool} reads {secrets[0]}: {why}",
                source="sandbox",
                hard=True,
                suggestions=suggestions,
            )
        if read_only:
            return Decision(behavior="allow", reason=f"{tool} is read-only", source="default")
        if mode == "acceptEdits" and (kind == "edit" or tool in EDIT_TOOLS) and resolved:
            return Decision(
                behavior="allow",
                reason="acceptEdits mode: edits inside the workspace",
                source="mode",
            )
        what = "changes files" if (kind == "edit" or tool in EDIT_TOOLS) else "is not read-only"
        return Decision(
            behavior="ask", reason=f"{tool} {what}", source="default", suggestions=suggestions
        )

    # -- Bash ----------------------------------------------------------------------------------

    def _decide_bash(self, command: str, policy: Policy) -> Decision:
        assert self.home is not None
        analysis = self._shell.analyze(command, cwd=self.cwd)
        units, extra_problems = self._units(analysis, depth=0)
        loose_units = list(units)
        if analysis.problems:
            # Deny rules must not be dodged by text the parser misread: look at plausible
            # re-readings of the command too, and at a crude split on shell operators.
            for variant in _rereadings(command):
                more = self._shell.analyze(variant, cwd=self.cwd)
                loose_units.extend(self._units(more, depth=0)[0])
            loose_units.extend(_crude_units(command, self.cwd))
        roots = self.all_roots(policy)
        mode = self.effective_mode(policy)

        # 1-2: deny, then ask rules, on every simple command, redirect and read path.
        for behavior in ("deny", "ask"):
            rules = [r for r in self._rules(policy, behavior) if r.tool == "Bash"]
            for unit in loose_units:
                view = _view(unit.cmd)
                verb = "denies" if behavior == "deny" else "asks before"
                for rule in rules:
                    if rule.matches_command(view, loose=True):
                        raise _RefusalError(
                            _by_rule(
                                behavior,
                                rule,
                                f"the rule {rule} {verb} `{_short(unit.cmd.text)}`",
                                self._bash_suggestions(units),
                            )
                        )
            self._path_rules_on_redirects(analysis, policy, behavior)

        problems = [*analysis.problems, *extra_problems]
        uncovered: list[str] = []
        rule_used: Rule | None = None
        all_read_only = not problems and not analysis.unsafe
        sensitive: str | None = None

        for unit in units:
            verdict_reason, reads_outside, by_rule = self._cover_unit(unit, policy, roots)
            if by_rule is not None:
                rule_used = rule_used or by_rule
                all_read_only = False
                sensitive = sensitive or self._sensitive_args(unit)
                continue
            if verdict_reason is not None:
                all_read_only = False
                uncovered.append(verdict_reason)
            if reads_outside is not None:
                all_read_only = False
                uncovered.append(reads_outside)

        write_issues, write_sensitive, write_outside = self._judge_redirects(
            analysis, policy, roots, mode
        )
        if write_issues:
            all_read_only = False
        sensitive = sensitive or write_sensitive

        if mode == "plan" and not all_read_only:
            why = (
                problems or analysis.unsafe or uncovered or write_issues or ["it is not read-only"]
            )[0]
            return Decision(
                behavior="deny",
                reason=f"plan mode allows read-only commands only: {why}",
                source="mode",
            )
        suggestions = self._bash_suggestions(units)
        if sensitive:
            return Decision(
                behavior="ask",
                reason=sensitive,
                source="sandbox",
                hard=True,
                suggestions=suggestions,
                can_allow_always=False,
            )
        tool_wide = next(
            (r for r in self._rules(policy, "allow") if r.tool == "Bash" and r.kind == "tool"), None
        )
        if tool_wide is not None and not write_outside:
            return _by_rule("allow", tool_wide, f"allowed by the rule {tool_wide}")
        if mode == "bypassPermissions":
            return Decision(behavior="allow", reason="bypassPermissions mode", source="mode")
        if problems:
            return Decision(
                behavior="ask",
                reason=f"the command cannot be fully analysed ({problems[0]})",
                source="default",
                hard=True,
                suggestions=(),
                can_allow_always=False,
            )
        reasons = [*analysis.unsafe, *uncovered, *write_issues]
        if reasons:
            hard = bool(write_outside) or any(
                "outside the workspace" in r or "secret" in r for r in (*uncovered, *write_issues)
            )
            return Decision(
                behavior="ask",
                reason=f"`{_short(command)}`: {reasons[0]}",
                source="default",
                hard=hard,
                suggestions=suggestions,
            )
        if rule_used is not None:
            return _by_rule("allow", rule_used, f"allowed by the rule {rule_used}")
        return Decision(behavior="allow", reason="read-only command", source="default")

    def _units(self, analysis: Analysis, *, depth: int) -> tuple[list[_Unit], list[str]]:
        """Simple commands plus those inside literal ``bash -c`` / ``eval`` strings."""
        units = [_Unit(cmd=c, nested=depth > 0) for c in analysis.commands]
        problems: list[str] = []
        for cmd in analysis.commands:
            inner = _inline_script(cmd)
            if inner is None:
                continue
            if depth >= MAX_NESTED_SHELL:
                problems.append("shell commands nested too deeply")
                continue
            nested = self._shell.analyze(inner, cwd=cmd.cwd)
            more, more_problems = self._units(nested, depth=depth + 1)
            units.extend(more)
            problems.extend(more_problems + nested.problems + nested.unsafe)
        return units, problems

    def _cover_unit(
        self, unit: _Unit, policy: Policy, roots: tuple[Path, ...]
    ) -> tuple[str | None, str | None, Rule | None]:
        """``(why not read-only, why its reads are not allowed, allow rule that covers it)``."""
        cmd = unit.cmd
        view = _view(cmd)
        for rule in self._rules(policy, "allow"):
            if (
                rule.tool == "Bash"
                and rule.kind != "tool"
                and rule.matches_command(view, loose=False)
            ):
                return None, None, rule
        if _inline_script(cmd) is not None:
            return None, None, None  # judged through the commands inside the string
        secret = next((v for w in cmd.words for v in w.variables if secret_variable(v)), None)
        if secret is not None:
            # Like reading /proc/self/environ: the value would end up in the model's context.
            return (
                None,
                f"it expands ${secret}, which may hold a secret (`{_short(cmd.text)}`)",
                None,
            )
        if not cmd.words:
            if cmd.assignments:
                return "it assigns shell variables", None, None
            return None, None, None
        bad_assign = [a for a in cmd.assignments if a not in SAFE_ENV_ASSIGNMENTS]
        if bad_assign:
            return f"it sets {bad_assign[0]} for `{_short(cmd.text)}`", None, None
        argv = self._argv(cmd)
        if isinstance(argv, str):
            return argv, None, None
        return self._check_argv(argv, cmd, policy, roots, depth=0)

    def _check_argv(
        self,
        argv: list[str],
        cmd: SimpleCommand,
        policy: Policy,
        roots: tuple[Path, ...],
        *,
        depth: int,
    ) -> tuple[str | None, str | None, Rule | None]:
        verdict = check_read_only(argv, trusted=policy.trusted)
        if not verdict.ok:
            return f"{verdict.reason} (`{_short(cmd.text)}`)", None, None
        if verdict.inner is not None:
            if depth > 4:
                return "wrappers nested too deeply", None, None
            inner_view = CommandView(words=verdict.inner, loose=verdict.inner)
            for rule in self._rules(policy, "allow"):
                if (
                    rule.tool == "Bash"
                    and rule.kind != "tool"
                    and rule.matches_command(inner_view, loose=False)
                ):
                    return None, None, rule
            return self._check_argv(list(verdict.inner), cmd, policy, roots, depth=depth + 1)
        return None, self._check_reads(verdict, cmd, policy, roots), None

    def _argv(self, cmd: SimpleCommand) -> list[str] | str:
        """Literal argv with globs expanded, or why it cannot be known."""
        name = cmd.words[0]
        if name.value is None or name.glob:
            return f"the command name `{name.source}` is computed at run time"
        if any(w.value is None for w in cmd.words[1:]):
            if name.value in DYNAMIC_ARGS_OK and name.value not in ("printf", "test", "["):
                return [name.value]
            dynamic = next(w for w in cmd.words[1:] if w.value is None)
            return f"`{_short(cmd.text)}` has an argument computed at run time ({dynamic.why})"
        argv: list[str] = [name.value]
        for word in cmd.words[1:]:
            assert word.value is not None
            if not word.glob:
                argv.append(word.value)
                continue
            if cmd.cwd is None:
                return "a file pattern is used after a cd whose target is unknown"
            matches = _expand_glob(word.value, cmd.cwd)
            if matches is None:
                return f"the pattern {word.source} matches too many files"
            if any(Path(m).name.startswith("-") for m in matches):
                return f"the pattern {word.source} matches a file name that looks like an option"
            argv.extend(matches or [word.value])
        return argv

    def _check_reads(
        self, verdict: Verdict, cmd: SimpleCommand, policy: Policy, roots: tuple[Path, ...]
    ) -> str | None:
        """Why the files a read-only command reads are not all allowed, or ``None``."""
        assert self.home is not None
        base = cmd.cwd
        if verdict.chdir is not None:
            base = (
                None
                if base is None and not verdict.chdir.startswith("/")
                else resolve(Path(verdict.chdir), cwd=base)
            )
        targets: list[Path] = []
        if verdict.reads_cwd:
            if base is None:
                return "it reads the working directory, which a cd made unknown"
            targets.append(base)
        for raw in verdict.reads:
            if raw.startswith(DEV_READ_OK) or raw.startswith("/dev/fd/"):
                continue
            if base is None and not raw.startswith("/"):
                return f"it reads {raw} relative to a directory a cd made unknown"
            targets.append(resolve(Path(raw), cwd=base))
        deny = [
            r for r in self._rules(policy, "deny") if r.kind == "path" and r.covers_tool("Read")
        ]
        ask = [r for r in self._rules(policy, "ask") if r.kind == "path" and r.covers_tool("Read")]
        allow = [
            r for r in self._rules(policy, "allow") if r.kind == "path" and r.covers_tool("Read")
        ]
        for path in targets:
            for rule in deny:
                if rule.matches_path(path):
                    raise _RefusalError(
                        _by_rule("deny", rule, f"the rule {rule} denies reading {path}")
                    )
            for rule in ask:
                if rule.matches_path(path):
                    raise _RefusalError(
                        _by_rule("ask", rule, f"the rule {rule} asks before reading {path}")
                    )
            if _inside(path, roots) and not is_secret(path, home=self.home):
                continue
            if any(rule.matches_path(path) for rule in allow):
                continue
            secret = is_secret(path, home=self.home)
            if secret:
                return f"it reads {path}: {secret} (secret)"
            return f"it reads {path}, outside the workspace roots"
        return None

    def _path_rules_on_redirects(
        self, analysis: Analysis, policy: Policy, behavior: Behavior
    ) -> None:
        rules = [r for r in self._rules(policy, behavior) if r.kind == "path"]
        if not rules:
            return
        for redirect in analysis.redirects:
            path = _redirect_path(redirect)
            if path is None:
                continue
            tool = "Edit" if redirect.writes else "Read"
            for rule in rules:
                if rule.covers_tool(tool) and rule.matches_path(path):
                    raise _RefusalError(
                        _by_rule(
                            behavior,
                            rule,
                            f"the rule {rule} {'denies' if behavior == 'deny' else 'asks before'} "
                            f"{'writing' if redirect.writes else 'reading'} {path}",
                        )
                    )

    def _judge_redirects(
        self, analysis: Analysis, policy: Policy, roots: tuple[Path, ...], mode: PermissionMode
    ) -> tuple[list[str], str | None, bool]:
        """``(issues, sensitive reason, writes outside the roots)`` for every redirection."""
        assert self.home is not None
        issues: list[str] = []
        sensitive: str | None = None
        outside = False
        edit_allow = [
            r for r in self._rules(policy, "allow") if r.kind == "path" and r.covers_tool("Edit")
        ]
        read_allow = [
            r for r in self._rules(policy, "allow") if r.kind == "path" and r.covers_tool("Read")
        ]
        for redirect in analysis.redirects:
            secret = next((v for v in redirect.variables if secret_variable(v)), None)
            if secret is not None:
                issues.append(f"it expands ${secret}, which may hold a secret")
                continue
            if not (redirect.writes or redirect.reads):
                continue
            target = redirect.target
            if target is None or target.value is None or target.glob:
                issues.append(
                    "it redirects to a file name computed at run time "
                    f"({target.source if target else '?'})"
                )
                continue
            if redirect.writes and target.value in DEV_WRITE_OK:
                continue
            if redirect.reads and target.value.startswith(DEV_READ_OK):
                continue
            path = _redirect_path(redirect)
            if path is None:
                issues.append(
                    f"it redirects to {target.value} relative to a directory a cd made unknown"
                )
                continue
            inside = _inside(path, roots)
            if redirect.reads:
                if (inside and not is_secret(path, home=self.home)) or any(
                    r.matches_path(path) for r in read_allow
                ):
                    continue
                issues.append(f"it reads {path}, outside the workspace roots or secret")
                continue
            why = is_sensitive(path, home=self.home)
            if why:
                sensitive = sensitive or f"the command writes {path}: {why}"
                continue
            if any(r.matches_path(path) for r in edit_allow):
                continue
            if not inside:
                outside = True
                issues.append(f"it writes {path}, outside the workspace roots")
            elif mode not in ("acceptEdits", "bypassPermissions"):
                issues.append(f"it writes {path} (output redirection)")
        return issues, sensitive, outside

    def _sensitive_args(self, unit: _Unit) -> str | None:
        """For commands allowed by a rule: arguments naming protected paths still ask."""
        assert self.home is not None
        if unit.cmd.cwd is None:
            return None
        for word in unit.cmd.words[1:]:
            value = word.value
            if (
                not value
                or value.startswith("-")
                or ("/" not in value and not value.startswith("."))
            ):
                continue
            why = is_sensitive(resolve(Path(value), cwd=unit.cmd.cwd), home=self.home)
            if why:
                return f"`{_short(unit.cmd.text)}` touches {value}: {why}"
        return None

    # -- suggestions and memory ------------------------------------------------------------

    def _bash_suggestions(self, units: Sequence[_Unit]) -> tuple[str, ...]:
        out: list[str] = []
        for unit in units:
            words = _view(unit.cmd).words
            if not words or unit.nested:
                continue
            argv = list(words)
            if check_read_only(argv, trusted=True).ok and argv[0] not in (
                "timeout",
                "env",
                "xargs",
            ):
                continue
            rule = _suggest_bash(argv)
            if rule and rule not in out:
                out.append(rule)
        return tuple(out)

    def _tool_suggestions(
        self, tool: str, resolved: Sequence[Path], raw_input: dict[str, Any]
    ) -> tuple[str, ...]:
        if tool.startswith("mcp__"):
            return (tool,)
        if tool == "WebFetch":
            from urllib.parse import urlsplit

            url = raw_input.get("url")
            host = urlsplit(url).hostname if isinstance(url, str) else None
            return (f"WebFetch(domain:{host})",) if host else ("WebFetch",)
        if resolved and tool in {
            "Read",
            "Grep",
            "Glob",
            "Edit",
            "Write",
            "MultiEdit",
            "NotebookEdit",
        }:
            family = "Read" if tool in ("Read", "Grep", "Glob") else "Edit"
            return tuple(f"{family}(/{p.as_posix()})" for p in resolved)
        return (tool,)

    def suggest(
        self, *, tool: str, raw_input: dict[str, Any], paths: Sequence[Path] = ()
    ) -> tuple[str, ...]:
        """The narrowest rules that would cover this call (for "always" answers)."""
        if tool == "Bash":
            command = raw_input.get("command")
            if not isinstance(command, str):
                return ()
            units, _ = self._units(self._shell.analyze(command, cwd=self.cwd), depth=0)
            return self._bash_suggestions(units)
        return self._tool_suggestions(tool, [resolve(p, cwd=self.cwd) for p in paths], raw_input)

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


def _by_rule(
    behavior: Behavior, rule: Rule, reason: str, suggestions: tuple[str, ...] = ()
) -> Decision:
    where = {
        "cli": "--allowedTools/--disallowedTools",
        "session": "your answer earlier in this session",
    }.get(rule.source, f"{rule.source} settings")
    return Decision(
        behavior=behavior,
        reason=f"{reason} ({where})",
        rule=rule.text,
        source=rule.source,
        hard=behavior == "ask",
        suggestions=suggestions,
        can_allow_always=behavior != "ask",
    )


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    parts = path.parts
    return any(parts[: len(r.parts)] == r.parts for r in roots)


def _short(text: str, limit: int = 80) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _view(cmd: SimpleCommand) -> CommandView:
    """Strict words plus loose variants (basename of a path, wrapped commands, folded case)."""
    values = [w.value for w in cmd.words]
    strict = tuple(v for v in values if v is not None) if None not in values else None
    loose = tuple(w.value if w.value is not None else w.source for w in cmd.words)
    variants: list[tuple[str, ...]] = []

    def add(words: tuple[str, ...]) -> None:
        if not words:
            return
        for form in (words, (os.path.basename(words[0]) or words[0], *words[1:])):
            folded = (fold(form[0]), *form[1:])
            for candidate in (form, folded):
                if candidate not in variants:
                    variants.append(candidate)

    add(loose)
    # ``{rm,-rf,x}`` runs ``rm -rf x``: read a plain brace list as the words it expands to.
    if len(cmd.words) >= 1 and cmd.words[0].why in ("brace expansion", "unparsed"):
        inner = re.fullmatch(r"\{([^{}]*,[^{}]*)\}", cmd.words[0].source)
        if inner:
            add((*inner.group(1).split(","), *loose[1:]))
    # Wrappers run their last words as a command: try every suffix that starts a command.
    queue = [loose]
    seen = 0
    while queue and seen < 32:
        words = queue.pop()
        seen += 1
        head = os.path.basename(words[0]) if words else ""
        if head not in WRAPPERS:
            continue
        for index in range(1, len(words)):
            word = words[index]
            if word.startswith("-") or "=" in word or word.replace(".", "").isdigit():
                continue
            suffix = words[index:]
            add(suffix)
            queue.append(suffix)
    return CommandView(words=strict, loose=loose, variants=tuple(variants))


def _inline_script(cmd: SimpleCommand) -> str | None:
    """The literal script of ``bash -c 'SCRIPT'`` or ``eval 'a' 'b'``, else ``None``."""
    words = [w.value for w in cmd.words]
    if not words or words[0] is None:
        return None
    name = os.path.basename(words[0])
    if name == "eval" and len(words) > 1 and all(w is not None for w in words[1:]):
        return " ".join(w for w in words[1:] if w is not None)
    if name in SHELLS:
        for index, word in enumerate(words[1:], start=1):
            if (
                word is not None
                and word.startswith("-")
                and "c" in word[1:]
                and not word.startswith("--")
            ):
                nxt = words[index + 1] if index + 1 < len(words) else None
                return nxt
    return None


def _rereadings(command: str) -> list[str]:
    """Other ways bash might read a command tree-sitter found odd (for deny matching only)."""
    out = []
    for variant in (
        command.replace("\\\n", ""),
        command.replace("\r", "\n"),
        command.replace("\r", ""),
    ):
        if variant != command and variant not in out:
            out.append(variant)
    return out


def _crude_units(command: str, cwd: Path | None) -> list[_Unit]:
    """Words of each piece between shell operators, for deny/ask matching of commands the
    parser could not read (never used to allow anything)."""
    units: list[_Unit] = []
    for piece in re.split(r"[;&|\n\r()`]+|\$\(", command):
        try:
            words = shlex.split(piece, comments=False, posix=True)
        except ValueError:
            words = piece.split()
        if words:
            cmd = SimpleCommand(
                words=tuple(Word(value=None, source=w, why="unparsed") for w in words),
                assignments=(),
                redirects=(),
                cwd=cwd,
                text=piece,
            )
            units.append(_Unit(cmd=cmd))
    return units


def _redirect_path(redirect: Redirect) -> Path | None:
    target: Word | None = redirect.target
    if target is None or target.value is None:
        return None
    raw = target.value
    if raw.startswith("/"):
        return resolve(Path(raw))
    if redirect.cwd is None:
        return None
    return resolve(Path(raw), cwd=redirect.cwd)


def _expand_glob(pattern: str, cwd: Path) -> list[str] | None:
    """Matches of a shell glob as bash would produce them (sorted; ``None``: too many)."""
    try:
        found = globlib.glob(pattern, root_dir=cwd, recursive=False, include_hidden=False)
    except (OSError, ValueError):
        return []
    if len(found) > MAX_GLOB_MATCHES:
        return None
    return sorted(found)


def _suggest_bash(argv: Sequence[str]) -> str | None:
    """The narrowest sensible rule for an argv: ``Bash(git commit:*)`` for sub-command tools,
    ``Bash(npm run test:*)``, ``Bash(python -m pytest:*)``, else the exact command."""
    if not argv:
        return None
    head = os.path.basename(argv[0])
    if (
        head in ("npm", "pnpm", "yarn", "bun")
        and len(argv) >= 3
        and argv[1] in ("run", "run-script", "exec")
    ):
        return f"Bash({quote_words(argv[:3])}:*)"
    if head.startswith("python") and len(argv) >= 3 and argv[1] == "-m":
        return f"Bash({quote_words(argv[:3])}:*)"
    if head in SUBCOMMAND_TOOLS and len(argv) >= 2 and not argv[1].startswith("-"):
        return f"Bash({quote_words(argv[:2])}:*)"
    text = quote_words(argv)
    if "\n" in text or len(text) > 300:
        return None
    return f"Bash({text})"
