"""Decisions for Bash calls: every simple command, redirection and file read of a parsed
command line is judged (see the engine's module docstring for the order).

Deny and ask rules are matched against every reading of the command (including re-readings of
text the parser found odd); allow rules and the read-only checkers only against the parsed
commands. A command that cannot be fully analysed asks, and its ask cannot be overridden.
"""

from __future__ import annotations

import glob as globlib
from dataclasses import dataclass
from pathlib import Path

from lsp_agent.permissions.bash_units import (
    Unit,
    crude_units,
    inline_script,
    redirect_path,
    rereadings,
    units_of,
    view,
)
from lsp_agent.permissions.decision import (
    Behavior,
    Decision,
    Grounds,
    RefusalError,
    by_rule,
    inside,
    short,
)
from lsp_agent.permissions.paths import is_secret, is_sensitive, resolve
from lsp_agent.permissions.readonly import (
    DYNAMIC_ARGS_OK,
    SAFE_ENV_ASSIGNMENTS,
    Verdict,
    check_read_only,
    secret_variable,
)
from lsp_agent.permissions.rules import CommandView, Rule
from lsp_agent.permissions.shell import Analysis, Redirect, ShellAnalyzer, SimpleCommand
from lsp_agent.permissions.suggestions import bash_suggestions

MAX_GLOB_MATCHES = 256
"""A glob with more matches than this is not expanded; the command asks."""

DEV_READ_OK = ("/dev/null", "/dev/stdin", "/dev/zero", "/dev/urandom", "/dev/random")
DEV_WRITE_OK = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2")


@dataclass(frozen=True, kw_only=True)
class _Findings:
    """What judging every unit and redirection found (no rule refused the command)."""

    problems: list[str]
    uncovered: list[str]
    rule_used: Rule | None
    read_only: bool
    sensitive: str | None
    write_issues: list[str]
    write_outside: bool


def decide_bash(command: str, *, shell: ShellAnalyzer, grounds: Grounds) -> Decision:
    """Decide one Bash ``command``. Raises :class:`RefusalError` when a deny or ask rule, or a
    rule on a file the command reads, decides it while walking the command."""
    analysis = shell.analyze(command, cwd=grounds.cwd)
    units, extra_problems = units_of(analysis, shell)
    _refuse_by_rules(command, analysis, units, shell, grounds)
    findings = _survey(analysis, units, extra_problems, grounds)
    _refuse_for_broken_settings(command, findings, units, grounds)
    return _conclude(command, analysis, units, findings, grounds)


def _refuse_by_rules(
    command: str, analysis: Analysis, units: list[Unit], shell: ShellAnalyzer, grounds: Grounds
) -> None:
    """Steps 1-2: deny, then ask rules, on every simple command (every reading of it) and
    every redirection. Raises :class:`RefusalError` on the first match."""
    loose_units = list(units)
    if analysis.problems:
        # Deny rules must not be dodged by text the parser misread: look at plausible
        # re-readings of the command too, and at a crude split on shell operators.
        for variant in rereadings(command):
            more = shell.analyze(variant, cwd=grounds.cwd)
            loose_units.extend(units_of(more, shell)[0])
        loose_units.extend(crude_units(command, grounds.cwd))
    behaviors: tuple[Behavior, ...] = ("deny", "ask")
    for behavior in behaviors:
        # The stand-ins for a broken settings file ask before changes only (see below).
        rules = [r for r in grounds.rules(behavior) if r.tool == "Bash" and not r.origin.broken]
        verb = "denies" if behavior == "deny" else "asks before"
        for unit in loose_units:
            unit_view = view(unit.cmd)
            for rule in rules:
                if rule.matches_command(unit_view, loose=True):
                    raise RefusalError(
                        by_rule(
                            behavior,
                            rule,
                            f"the rule {rule} {verb} `{short(unit.cmd.text)}`",
                            bash_suggestions(units),
                        )
                    )
        _path_rules_on_redirects(analysis, grounds, behavior)


def _refuse_for_broken_settings(
    command: str, found: _Findings, units: list[Unit], grounds: Grounds
) -> None:
    """Step 2 for the ask rules standing in for a broken settings file: they ask before a
    command that is not provably read-only (``ls`` runs as it would with the file fixed).
    Raises :class:`RefusalError` with the decision naming the broken file."""
    if found.read_only:
        return
    broken = next((r for r in grounds.ask if r.tool == "Bash" and r.origin.broken), None)
    if broken is not None:
        reason = f"the settings file is broken and `{short(command)}` may change things"
        raise RefusalError(by_rule("ask", broken, reason, bash_suggestions(units)))


def _survey(
    analysis: Analysis, units: list[Unit], extra_problems: list[str], grounds: Grounds
) -> _Findings:
    """Judge every unit (allow rules, read-only checkers, the files it reads) and every
    redirection."""
    problems = [*analysis.problems, *extra_problems]
    uncovered: list[str] = []
    rule_used: Rule | None = None
    read_only = not problems and not analysis.unsafe
    sensitive: str | None = None
    for unit in units:
        verdict_reason, reads_outside, rule = _cover_unit(unit, grounds)
        if rule is not None:
            rule_used = rule_used or rule
            read_only = False
            sensitive = sensitive or _sensitive_args(unit, grounds.home)
            continue
        if verdict_reason is not None:
            # A command that may write: protected paths among its arguments ask in every mode.
            sensitive = sensitive or _sensitive_args(unit, grounds.home)
        for reason in (verdict_reason, reads_outside):
            if reason is not None:
                read_only = False
                uncovered.append(reason)
    write_issues, write_sensitive, write_outside = _judge_redirects(analysis, grounds)
    return _Findings(
        problems=problems,
        uncovered=uncovered,
        rule_used=rule_used,
        read_only=read_only and not write_issues,
        sensitive=sensitive or write_sensitive,
        write_issues=write_issues,
        write_outside=write_outside,
    )


def plain_reason(command: str, detail: str) -> str:
    """Why a command asks, for the permission prompt, which already shows the command: the
    analyser's ``detail`` as a sentence, without the command repeated when it names the whole
    command (``it can run code or change files (`python -m pytest -q`)`` → ``It can run code
    or change files.``); a part of a longer command stays named."""
    whole = f" (`{short(command)}`)"
    text = detail.removesuffix(whole).strip()
    if not text:
        return "Not known to be read-only."
    # Program names lead many details (``read is not…``): only "it" is capitalised.
    text = "It" + text[2:] if text.startswith("it ") else text
    return text if text.endswith((".", ")")) else text + "."


def _conclude(
    command: str, analysis: Analysis, units: list[Unit], found: _Findings, grounds: Grounds
) -> Decision:
    """Steps 3-7 on what the survey found: plan mode, the sandbox, a tool-wide allow rule,
    bypass mode, unanalysable commands, then what is not read-only."""
    if grounds.mode == "plan" and not found.read_only:
        why = (
            found.problems
            or analysis.unsafe
            or found.uncovered
            or found.write_issues
            or ["it is not read-only"]
        )[0]
        return Decision(
            behavior="deny",
            reason=f"plan mode allows read-only commands only: {why}",
            source="mode",
        )
    suggestions = bash_suggestions(units)
    if found.sensitive:
        return Decision(
            behavior="ask",
            reason=found.sensitive,
            source="sandbox",
            hard=True,
            suggestions=suggestions,
            can_allow_always=False,
        )
    tool_wide = next((r for r in grounds.allow if r.tool == "Bash" and r.kind == "tool"), None)
    if tool_wide is not None and not found.write_outside:
        return by_rule("allow", tool_wide, f"allowed by the rule {tool_wide}")
    if grounds.mode == "bypassPermissions":
        return Decision(behavior="allow", reason="bypassPermissions mode", source="mode")
    if found.problems:
        return Decision(
            behavior="ask",
            reason=f"the command cannot be fully analysed ({found.problems[0]})",
            source="default",
            hard=True,
            suggestions=(),
            can_allow_always=False,
        )
    reasons = [*analysis.unsafe, *found.uncovered, *found.write_issues]
    if reasons:
        hard = found.write_outside or any(
            "outside the workspace" in r or "secret" in r
            for r in (*found.uncovered, *found.write_issues)
        )
        return Decision(
            behavior="ask",
            reason=plain_reason(command, reasons[0]),
            source="default",
            hard=hard,
            suggestions=suggestions,
        )
    if found.rule_used is not None:
        return by_rule("allow", found.rule_used, f"allowed by the rule {found.rule_used}")
    return Decision(behavior="allow", reason="read-only command", source="default")


def _allow_rule_for(words: CommandView, grounds: Grounds) -> Rule | None:
    """The first command-specific Bash allow rule matching ``words`` strictly."""
    for rule in grounds.allow:
        if rule.tool == "Bash" and rule.kind != "tool" and rule.matches_command(words, loose=False):
            return rule
    return None


def _cover_unit(unit: Unit, grounds: Grounds) -> tuple[str | None, str | None, Rule | None]:
    """``(why not read-only, why its reads are not allowed, allow rule that covers it)``."""
    cmd = unit.cmd
    rule = _allow_rule_for(view(cmd), grounds)
    if rule is not None:
        return None, None, rule
    if inline_script(cmd) is not None:
        return None, None, None  # judged through the commands inside the string
    secret = next((v for w in cmd.words for v in w.variables if secret_variable(v)), None)
    if secret is not None:
        # Like reading /proc/self/environ: the value would end up in the model's context.
        return (
            None,
            f"it expands ${secret}, which may hold a secret (`{short(cmd.text)}`)",
            None,
        )
    if not cmd.words:
        if cmd.assignments:
            return "it assigns shell variables", None, None
        return None, None, None
    bad_assign = [a for a in cmd.assignments if a not in SAFE_ENV_ASSIGNMENTS]
    if bad_assign:
        return f"it sets {bad_assign[0]} for `{short(cmd.text)}`", None, None
    argv = _argv(cmd)
    if isinstance(argv, str):
        return argv, None, None
    return _check_argv(argv, cmd, grounds, depth=0)


def _check_argv(
    argv: list[str], cmd: SimpleCommand, grounds: Grounds, *, depth: int
) -> tuple[str | None, str | None, Rule | None]:
    verdict = check_read_only(argv, trusted=grounds.trusted)
    if not verdict.ok:
        return f"{verdict.reason} (`{short(cmd.text)}`)", None, None
    if verdict.inner is not None:
        if depth > 4:
            return "wrappers nested too deeply", None, None
        rule = _allow_rule_for(CommandView(words=verdict.inner, loose=verdict.inner), grounds)
        if rule is not None:
            return None, None, rule
        return _check_argv(list(verdict.inner), cmd, grounds, depth=depth + 1)
    return None, _check_reads(verdict, cmd, grounds), None


def _argv(cmd: SimpleCommand) -> list[str] | str:
    """Literal argv with globs expanded, or why it cannot be known."""
    name = cmd.words[0]
    if name.value is None or name.glob:
        return f"the command name `{name.source}` is computed at run time"
    if any(w.value is None and w.expansion is None for w in cmd.words[1:]):
        if name.value in DYNAMIC_ARGS_OK and name.value not in ("printf", "test", "["):
            return [name.value]
        dynamic = next(w for w in cmd.words[1:] if w.value is None and w.expansion is None)
        return f"`{short(cmd.text)}` has an argument computed at run time ({dynamic.why})"
    argv: list[str] = [name.value]
    for word in cmd.words[1:]:
        if word.expansion is not None:
            argv.extend(word.expansion)  # a brace list: only more literal arguments
            continue
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


def _read_targets(verdict: Verdict, cmd: SimpleCommand) -> list[Path] | str:
    """The resolved files a read-only command reads, or why they cannot be known."""
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
    return targets


def _check_reads(verdict: Verdict, cmd: SimpleCommand, grounds: Grounds) -> str | None:
    """Why the files a read-only command reads are not all allowed, or ``None``. Raises
    :class:`RefusalError` when a ``Read`` deny or ask rule matches one of them."""
    targets = _read_targets(verdict, cmd)
    if isinstance(targets, str):
        return targets
    deny = [r for r in grounds.deny if r.kind == "path" and r.covers_tool("Read")]
    ask = [r for r in grounds.ask if r.kind == "path" and r.covers_tool("Read")]
    allow = [r for r in grounds.allow if r.kind == "path" and r.covers_tool("Read")]
    for path in targets:
        for rule in deny:
            if rule.matches_path(path):
                raise RefusalError(by_rule("deny", rule, f"the rule {rule} denies reading {path}"))
        for rule in ask:
            if rule.matches_path(path):
                raise RefusalError(
                    by_rule("ask", rule, f"the rule {rule} asks before reading {path}")
                )
        if inside(path, grounds.roots) and not is_secret(path, home=grounds.home):
            continue
        if any(rule.matches_path(path) for rule in allow):
            continue
        secret = is_secret(path, home=grounds.home)
        if secret:
            return f"it reads {path}: {secret} (secret)"
        return f"it reads {path}, outside the workspace roots"
    return None


def _path_rules_on_redirects(analysis: Analysis, grounds: Grounds, behavior: Behavior) -> None:
    """``Edit`` rules on output and ``Read`` rules on input redirections; raises
    :class:`RefusalError` on the first match."""
    rules = [r for r in grounds.rules(behavior) if r.kind == "path"]
    if not rules:
        return
    for redirect in analysis.redirects:
        path = redirect_path(redirect)
        if path is None:
            continue
        tool = "Edit" if redirect.writes else "Read"
        for rule in rules:
            if rule.covers_tool(tool) and rule.matches_path(path):
                raise RefusalError(
                    by_rule(
                        behavior,
                        rule,
                        f"the rule {rule} {'denies' if behavior == 'deny' else 'asks before'} "
                        f"{'writing' if redirect.writes else 'reading'} {path}",
                    )
                )


@dataclass(frozen=True, kw_only=True)
class _RedirectVerdict:
    issue: str | None = None
    sensitive: str | None = None
    outside: bool = False


_FINE = _RedirectVerdict()


def _judge_redirects(analysis: Analysis, grounds: Grounds) -> tuple[list[str], str | None, bool]:
    """``(issues, sensitive reason, writes outside the roots)`` for every redirection."""
    edit_allow = [r for r in grounds.allow if r.kind == "path" and r.covers_tool("Edit")]
    read_allow = [r for r in grounds.allow if r.kind == "path" and r.covers_tool("Read")]
    issues: list[str] = []
    sensitive: str | None = None
    outside = False
    for redirect in analysis.redirects:
        verdict = _judge_redirect(redirect, grounds, edit_allow, read_allow)
        if verdict.issue is not None:
            issues.append(verdict.issue)
        sensitive = sensitive or verdict.sensitive
        outside = outside or verdict.outside
    return issues, sensitive, outside


def _judge_redirect(
    redirect: Redirect, grounds: Grounds, edit_allow: list[Rule], read_allow: list[Rule]
) -> _RedirectVerdict:
    secret = next((v for v in redirect.variables if secret_variable(v)), None)
    if secret is not None:
        return _RedirectVerdict(issue=f"it expands ${secret}, which may hold a secret")
    if not (redirect.writes or redirect.reads):
        return _FINE
    target = redirect.target
    if target is None or target.value is None or target.glob:
        return _RedirectVerdict(
            issue="it redirects to a file name computed at run time "
            f"({target.source if target else '?'})"
        )
    if redirect.writes and target.value in DEV_WRITE_OK:
        return _FINE
    if redirect.reads and target.value.startswith(DEV_READ_OK):
        return _FINE
    path = redirect_path(redirect)
    if path is None:
        return _RedirectVerdict(
            issue=f"it redirects to {target.value} relative to a directory a cd made unknown"
        )
    within = inside(path, grounds.roots)
    if redirect.reads:
        if (within and not is_secret(path, home=grounds.home)) or any(
            r.matches_path(path) for r in read_allow
        ):
            return _FINE
        return _RedirectVerdict(issue=f"it reads {path}, outside the workspace roots or secret")
    why = is_sensitive(path, home=grounds.home, exempt=grounds.exempt)
    if why:
        return _RedirectVerdict(sensitive=f"the command writes {path}: {why}")
    if any(r.matches_path(path) for r in edit_allow):
        return _FINE
    if not within:
        return _RedirectVerdict(
            issue=f"it writes {path}, outside the workspace roots", outside=True
        )
    if grounds.mode not in ("acceptEdits", "bypassPermissions"):
        return _RedirectVerdict(issue=f"it writes {path} (output redirection)")
    return _FINE


def _sensitive_args(unit: Unit, home: Path) -> str | None:
    """For commands that may write (not read-only, or allowed by a rule): arguments naming
    protected paths (``--opt=value`` values included, relative ones against the command's
    directory) still ask."""
    if unit.cmd.cwd is None:
        return None
    values = [v for w in unit.cmd.words[1:] for v in (w.expansion or (w.value,))]
    for value in values:
        target = value.partition("=")[2] if value and value.startswith("-") else value
        if not target:
            continue
        why = is_sensitive(resolve(Path(target), cwd=unit.cmd.cwd), home=home)
        if why:
            return f"`{short(unit.cmd.text)}` touches {target}: {why}"
    return None


def _expand_glob(pattern: str, cwd: Path) -> list[str] | None:
    """Matches of a shell glob as bash would produce them (sorted; ``None``: too many)."""
    try:
        found = globlib.glob(pattern, root_dir=cwd, recursive=False, include_hidden=False)
    except (OSError, ValueError):
        return []
    if len(found) > MAX_GLOB_MATCHES:
        return None
    return sorted(found)
