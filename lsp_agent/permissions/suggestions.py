"""The narrowest rules that would cover a call, offered with "always" answers.

``Bash(git commit:*)`` for sub-command tools, ``Bash(npm run test:*)``,
``Bash(python -m pytest:*)``, else the exact command; ``Read(/path)`` / ``Edit(/path)`` for
file tools, ``WebFetch(domain:host)`` for fetches, the tool name for MCP and other tools.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from lsp_agent.permissions.rules import RuleSyntaxError, quote_words, split_rule

if TYPE_CHECKING:
    from lsp_agent.permissions.bash_units import Unit

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


def bash_suggestions(units: Sequence[Unit]) -> tuple[str, ...]:
    """One rule per top-level simple command that is not plainly read-only, without repeats
    (rule texts such as ``Bash(git commit:*)``)."""
    # The shell analysis is imported with the first Bash suggestion (tool suggestions, asked
    # for every decision, do not need it).
    from lsp_agent.permissions.bash_units import view
    from lsp_agent.permissions.readonly import check_read_only

    out: list[str] = []
    for unit in units:
        words = view(unit.cmd).words
        if not words or unit.nested:
            continue
        argv = list(words)
        if check_read_only(argv, trusted=True).ok and argv[0] not in (
            "timeout",
            "env",
            "xargs",
        ):
            continue
        rule = suggest_bash(argv)
        if rule and rule not in out:
            out.append(rule)
    return tuple(out)


def tool_suggestions(
    tool: str, resolved: Sequence[Path], raw_input: dict[str, Any]
) -> tuple[str, ...]:
    """Rules for a non-Bash call on the resolved ``resolved`` paths (rule texts)."""
    if tool.startswith("mcp__"):
        return (tool,)
    if tool == "WebFetch":
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


def suggest_bash(argv: Sequence[str]) -> str | None:
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


def rule_label(rule: str, cwd: Path | None = None) -> str:
    """A path rule as the path the user recognises, for permission prompts (the rule text
    stays what is saved): ``Edit(//home/me/proj/src/calc.py)`` → ``Edit src/calc.py`` —
    relative to ``cwd`` when under it, ``~/…`` under the home folder, else the absolute
    path; a ``/**`` ending → ``files under src/`` or ``files in the project``. Other rules
    (``Bash(npm run lint:*)``, tool names, relative patterns) read well as they are and are
    returned unchanged, as is malformed text."""
    try:
        tool, spec = split_rule(rule)
    except RuleSyntaxError:
        return rule
    if spec is not None and spec.startswith("//") and tool != "Bash":
        return f"{tool} {_shown_path(spec[1:], cwd)}"
    return rule


def _shown_path(path: str, cwd: Path | None) -> str:
    """An absolute rule path as the user knows it (see :func:`rule_label`)."""
    under = path.endswith("/**")
    target = Path(path.removesuffix("/**") if under else path)
    shown = target.as_posix()
    home = Path.home()
    if cwd is not None and target.is_relative_to(cwd):
        shown = target.relative_to(cwd).as_posix()
        if shown == "." and under:
            return "files in the project"
    elif target.is_relative_to(home):
        shown = "~/" + target.relative_to(home).as_posix()
    return f"files under {shown}/" if under else shown
