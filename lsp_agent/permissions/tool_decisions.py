"""Decisions for every tool call but Bash: rules, mode, sandbox and defaults, in the order the
engine's module docstring gives (deny beats ask beats allow)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lsp_agent.permissions.decision import Decision, Grounds, by_rule, inside
from lsp_agent.permissions.paths import is_secret, is_sensitive, resolve
from lsp_agent.permissions.rules import EDIT_TOOLS, Rule
from lsp_agent.permissions.suggestions import tool_suggestions


def decide_tool(
    grounds: Grounds,
    *,
    tool: str,
    read_only: bool,
    kind: str,
    paths: Sequence[Path],
    raw_input: dict[str, Any],
    paths_resolved: bool = False,
) -> Decision:
    """Decide one non-Bash call. ``paths`` are the absolute files it touches; deny and ask
    rules match if any path (as given or resolved) matches, allow rules only if every resolved
    path does. ``paths_resolved``: the caller resolved ``paths`` just now (see
    :meth:`PermissionEngine.decide`), so they are both."""
    resolved, candidates = _candidates(paths, cwd=grounds.cwd, resolved=paths_resolved)

    def suggestions() -> tuple[str, ...]:
        # Only an ask carries them: worked out when one is made, not for every allowed call.
        return tool_suggestions(tool, resolved, raw_input)

    for rule in grounds.deny:
        if _hits(rule, tool, candidates, raw_input, loose=True):
            return by_rule("deny", rule, f"{tool} is denied by the rule {rule}")
    for rule in grounds.ask:
        if _hits(rule, tool, candidates, raw_input, loose=True):
            return by_rule("ask", rule, f"the rule {rule} asks before {tool}", suggestions())
    if grounds.mode == "plan" and not read_only:
        return Decision(
            behavior="deny",
            reason=f"plan mode allows read-only tools only ({tool} is not)",
            source="mode",
        )
    if not read_only:
        sensitive = _sensitive_write(tool, resolved, grounds, suggestions)
        if sensitive is not None:
            return sensitive
    outside = [p for p in resolved if not inside(p, grounds.roots)]
    secrets = [p for p in resolved if read_only and is_secret(p, home=grounds.home)]
    for rule in grounds.allow:
        if not _hits(rule, tool, resolved, raw_input, loose=False):
            continue
        if rule.kind == "tool" and (outside or secrets):
            continue  # a tool-wide rule does not reach outside the roots or into secrets
        return by_rule("allow", rule, f"allowed by the rule {rule}")
    if grounds.mode == "bypassPermissions":
        return Decision(behavior="allow", reason="bypassPermissions mode", source="mode")
    return _sandbox_or_default(
        grounds,
        tool=tool,
        read_only=read_only,
        kind=kind,
        resolved=resolved,
        outside=outside,
        secrets=secrets,
        suggestions=suggestions,
    )


def _candidates(
    paths: Sequence[Path], *, cwd: Path, resolved: bool
) -> tuple[list[Path], list[Path]]:
    """The resolved ``paths``, and those plus the paths as given (for deny and ask rules)."""
    if resolved:
        return list(paths), list(paths)
    out = [resolve(p, cwd=cwd) for p in paths]
    return out, [*out, *(p for p in paths if p.is_absolute() and p not in out)]


def _hits(
    rule: Rule, tool: str, pool: Sequence[Path], raw_input: dict[str, Any], *, loose: bool
) -> bool:
    """Whether ``rule`` covers this call; a path rule needs any (``loose``) or every path of
    ``pool`` to match, and no path never matches."""
    if not rule.covers_tool(tool):
        return False
    if rule.kind in ("tool", "mcp"):
        return True
    if rule.kind == "path":
        if not pool:
            return False
        return any(map(rule.matches_path, pool)) if loose else all(map(rule.matches_path, pool))
    if rule.kind == "domain":
        url = raw_input.get("url")
        return isinstance(url, str) and rule.matches_url(url)
    if rule.kind == "name":
        return rule.matches_input(raw_input)
    return False


def _sensitive_write(
    tool: str,
    resolved: Sequence[Path],
    grounds: Grounds,
    suggestions: Callable[[], tuple[str, ...]],
) -> Decision | None:
    """The sandbox's hard ask when a write touches a protected path, in every mode."""
    for path in resolved:
        why = is_sensitive(path, home=grounds.home, exempt=grounds.exempt)
        if why:
            return Decision(
                behavior="ask",
                reason=f"{tool} writes {path}: {why}",
                source="sandbox",
                hard=True,
                suggestions=suggestions(),
                can_allow_always=False,
            )
    return None


def _sandbox_or_default(
    grounds: Grounds,
    *,
    tool: str,
    read_only: bool,
    kind: str,
    resolved: Sequence[Path],
    outside: Sequence[Path],
    secrets: Sequence[Path],
    suggestions: Callable[[], tuple[str, ...]],
) -> Decision:
    """No rule decided: the sandbox asks outside the roots and before secrets; read-only tools
    are allowed, edits too in ``acceptEdits``; everything else asks."""
    if outside:
        verb = "reads" if read_only else "writes"
        return Decision(
            behavior="ask",
            reason=f"{tool} {verb} {outside[0]}, outside the workspace roots",
            source="sandbox",
            hard=True,
            suggestions=suggestions(),
        )
    if secrets:
        why = is_secret(secrets[0], home=grounds.home)
        return Decision(
            behavior="ask",
            reason=f"{tool} reads {secrets[0]}: {why}",
            source="sandbox",
            hard=True,
            suggestions=suggestions(),
        )
    if read_only:
        return Decision(behavior="allow", reason=f"{tool} is read-only", source="default")
    edits = kind == "edit" or tool in EDIT_TOOLS
    if grounds.mode == "acceptEdits" and edits and resolved:
        return Decision(
            behavior="allow",
            reason="acceptEdits mode: edits inside the workspace",
            source="mode",
        )
    what = "changes files" if edits else "is not read-only"
    return Decision(
        behavior="ask", reason=f"{tool} {what}", source="default", suggestions=suggestions()
    )
