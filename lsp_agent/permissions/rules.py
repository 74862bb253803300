"""Claude Code's permission rule grammar: parsing and matching.

A rule is ``Tool`` or ``Tool(specifier)`` (source: Claude Code's permissions documentation):

``Bash(npm run test:*)``
    Prefix rule: the *words* of a simple command start with ``npm run test`` (whole words:
    ``npm run testing`` does not match).
``Bash(git * main)``
    Wildcard rule: ``*`` matches any characters (spaces included) of the command's words joined
    by single spaces; a single trailing `` *`` is optional (``Bash(ls *)`` matches ``ls``).
``Bash(make)``
    Exact rule: the simple command's words are exactly ``make``.
``Read(src/**)``, ``Edit(//etc/hosts)``, ``Edit(~/notes/**)``, ``Read(/docs/**)``
    Path rules with gitignore patterns (``pathspec``): ``//x`` is the absolute path ``/x``,
    ``~/x`` is under the home directory, ``/x`` is relative to the settings file's root
    directory (the project for project files, the home directory for user files), ``./x`` and
    ``x`` are relative to the session's working directory (a pattern without a ``/`` matches at
    any depth, as in ``.gitignore``). ``Read`` rules cover the read-only file tools (``Read``,
    ``Grep``, ``Glob``) and the files read-only shell commands read; ``Edit`` rules cover every
    tool that edits files and shell output redirections.
``WebFetch(domain:example.com)``
    The URL's host is ``example.com`` (``domain:*.example.com`` also matches sub-domains).
``mcp__server``, ``mcp__server__*``, ``mcp__server__tool``
    Every tool of an MCP server, or one tool.

A Bash rule is matched against each *simple command* of a parsed command line (see
:mod:`lsp_agent.permissions.shell`), never against the raw string, so ``Bash(npm test:*)``
never covers ``npm test && rm -rf /``.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from lsp_agent.permissions.paths import fold

if TYPE_CHECKING:
    import pathspec

_POSIX = os.name == "posix"
"""Path components compare exactly (``relative_to`` folds case on Windows)."""

RuleBehavior = Literal["allow", "ask", "deny"]

READ_TOOLS = frozenset({"Read", "Grep", "Glob", "LS", "NotebookRead"})
"""Tools covered by ``Read`` rules."""

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "Rename"})
"""Tools covered by ``Edit`` rules."""

PATH_RULE_TOOLS = frozenset({"Read", "Edit", "Write", "Glob", "Grep", "NotebookEdit", "MultiEdit"})
"""Tool names whose specifier is a path pattern."""

NAME_SPECIFIER_TOOLS = {"Task": "subagent_type", "Agent": "subagent_type", "Skill": "skill"}
"""Tools whose specifier is matched exactly against one input field."""

KNOWN_TOOLS = frozenset(
    {
        "Bash",
        "BashOutput",
        "KillShell",
        "Read",
        "Edit",
        "Write",
        "MultiEdit",
        "NotebookEdit",
        "NotebookRead",
        "Glob",
        "Grep",
        "LS",
        "WebFetch",
        "WebSearch",
        "Task",
        "Agent",
        "TodoWrite",
        "Skill",
        "SlashCommand",
        "ExitPlanMode",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
    }
)
"""Tool names Claude Code and this project know; other names get a warning, not an error."""

_TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_MCP_NAME = re.compile(r"mcp__[A-Za-z0-9_-]+?(?:__(?:[A-Za-z0-9_-]+|\*))?")
_HOST = re.compile(
    r"(\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
)


class RuleSyntaxError(ValueError):
    """A rule string that is not valid rule grammar; the message names the rule."""


@dataclass(frozen=True, kw_only=True)
class RuleOrigin:
    """Where a rule comes from and what its relative paths are relative to.

    ``source`` names the settings layer (``managed``, ``cli``, ``flagSettings``, ``lsp``,
    ``local``, ``project``, ``user``, ``session``); ``settings_root`` is the directory ``/x``
    patterns are relative to; ``cwd`` the session directory ``x``/``./x`` patterns are relative
    to; ``home`` the home directory for ``~/x``. ``file`` is the settings file, if any.
    ``broken``: the rule stands in for ``file``, which cannot be read (ask before every change).
    """

    source: str
    settings_root: Path
    cwd: Path
    home: Path
    file: Path | None = None
    broken: bool = False


@dataclass(frozen=True, kw_only=True)
class CommandView:
    """One simple command as rules see it.

    ``words`` are the literal words after quote removal, or ``None`` when a word is dynamic
    (expansion, substitution, glob); ``loose`` always has a string per word (the source text of
    dynamic words), for deny and ask matching, which should match more rather than less;
    ``variants`` are further loose readings (program basename, commands run by wrappers).
    """

    words: tuple[str, ...] | None
    loose: tuple[str, ...]
    variants: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One parsed rule. ``text`` is the rule as written; ``tool`` the tool part; ``specifier``
    the text in parentheses (``None`` for a tool-wide rule). Matching helpers are below."""

    text: str
    tool: str
    specifier: str | None
    behavior: RuleBehavior
    origin: RuleOrigin
    kind: Literal[
        "tool", "bash_exact", "bash_prefix", "bash_wildcard", "path", "domain", "mcp", "name"
    ]
    words: tuple[str, ...] = ()
    regex: re.Pattern[str] | None = None
    path_base: Path | None = None
    path_pattern: str | None = None
    host: str | None = None

    def __str__(self) -> str:
        return self.text

    @cached_property
    def path_spec(self) -> pathspec.GitIgnoreSpec | None:
        """The compiled gitignore pattern of a path rule (``None`` for other kinds), compiled on
        first use: a session's own plain-path rule then costs no ``pathspec`` import until a
        path is checked. Patterns that could be invalid were compiled once when parsed."""
        if self.path_pattern is None:
            return None
        import pathspec

        return pathspec.GitIgnoreSpec.from_lines([self.path_pattern])

    @cached_property
    def plain_path(self) -> tuple[str, str] | None:
        """For a path rule whose pattern is plain (``/a/b`` or ``/a/b/**``: literal segments,
        see ``_PLAIN_PATH_PATTERN``), its literal part ``a/b`` and ``a/b/``; ``None`` otherwise.
        Such a rule matches what ``pathspec`` would without importing it (about 10 ms, paid by
        the first tool call of a session, whose own ``Read(//<session folder>/**)`` rule is
        plain): ``/a/b`` and ``/a/b/**`` both match ``a/b`` (itself, or as ``a/b/``) and every
        path under it, and nothing else (compared with ``pathspec`` in the rule tests)."""
        pattern = self.path_pattern
        if pattern is None or not _PLAIN_PATH_PATTERN.fullmatch(pattern):
            return None
        literal = pattern[1:-3] if pattern.endswith("/**") else pattern[1:]
        return literal, literal + "/"

    @property
    def source(self) -> str:
        """The settings layer the rule came from."""
        return self.origin.source

    # -- tool coverage ---------------------------------------------------------------------

    def covers_tool(self, tool: str) -> bool:
        """Whether the rule is about ``tool`` at all (before looking at the specifier)."""
        if self.kind == "mcp":
            return _mcp_covers(self.tool, tool)
        if self.tool == "Read":
            return tool in READ_TOOLS
        if self.tool == "Edit":
            return tool in EDIT_TOOLS
        return self.tool == tool

    def is_tool_wide(self) -> bool:
        """A rule without a specifier (or ``*``): every call of the tool."""
        return self.kind in ("tool", "mcp")

    # -- specifier matching ------------------------------------------------------------------

    def matches_command(self, command: CommandView, *, loose: bool) -> bool:
        """Whether a Bash rule matches one simple command. ``loose`` (deny/ask) matches the
        source text of dynamic words too; strict matching (allow) needs literal words."""
        if self.kind == "tool":
            return True
        if not loose:
            return command.words is not None and self._match_words(command.words, folded=False)
        return any(
            self._match_words(words, folded=True)
            for words in (command.variants or (command.loose,))
        )

    def _match_words(self, words: tuple[str, ...], *, folded: bool) -> bool:
        if folded and words and self.words:
            # Deny/ask: compare the program name ignoring case and width (RM, full-width).
            words = (fold(words[0]), *words[1:])
            mine = (fold(self.words[0]), *self.words[1:])
        else:
            mine = self.words
        if self.kind == "bash_exact":
            return words == mine
        if self.kind == "bash_prefix":
            return words[: len(mine)] == mine
        if self.kind == "bash_wildcard":
            assert self.regex is not None
            text = " ".join(words)
            if folded:
                return re.fullmatch(self.regex.pattern, text, re.DOTALL | re.IGNORECASE) is not None
            return self.regex.fullmatch(text) is not None
        return False

    def matches_path(self, path: Path) -> bool:
        """Whether a path rule matches ``path`` (resolved, absolute)."""
        if self.kind == "tool":
            return True
        if self.kind != "path" or self.path_base is None or self.path_pattern is None:
            return False
        base = self.path_base.parts
        if _POSIX:
            parts = path.parts
            if parts[: len(base)] != base:
                return False  # what relative_to refuses on POSIX, without raising and catching
            # relative_to(...).as_posix() without making the relative path ("" for the base).
            text = "/".join(parts[len(base) :])
        else:
            try:
                rel = path.relative_to(self.path_base)
            except ValueError:
                return False
            text = rel.as_posix()
        if text in ("", "."):
            return False
        plain = self.plain_path
        if plain is not None:
            return text == plain[0] or text.startswith(plain[1])
        spec = self.path_spec
        if spec is None:
            return False
        return spec.match_file(text) or spec.match_file(text + "/")

    def matches_url(self, url: str) -> bool:
        """Whether a ``WebFetch(domain:...)`` rule matches ``url``."""
        if self.kind == "tool":
            return True
        if self.kind != "domain" or self.host is None:
            return False
        host = (urlsplit(url).hostname or "").rstrip(".").lower()
        if not host:
            return False
        if self.host.startswith("*."):
            return host.endswith(self.host[1:])
        return host == self.host

    def matches_input(self, raw_input: dict[str, Any]) -> bool:
        """Whether a name rule (``Task(agent)``) matches the call's input."""
        if self.kind == "tool":
            return True
        if self.kind != "name":
            return False
        key = NAME_SPECIFIER_TOOLS.get(self.tool)
        return key is not None and raw_input.get(key) == self.specifier


def _mcp_covers(rule_tool: str, tool: str) -> bool:
    if not tool.startswith("mcp__"):
        return False
    if rule_tool == tool:
        return True
    base = rule_tool[:-3] if rule_tool.endswith("__*") else rule_tool
    # ``mcp__server`` (or ``mcp__server__*``) covers every tool of that server.
    return base.count("__") == 1 and tool.startswith(base + "__")


def split_rule(text: str) -> tuple[str, str | None]:
    """Split ``Tool(specifier)`` into its parts; raises :class:`RuleSyntaxError`."""
    stripped = text.strip()
    if not stripped:
        raise RuleSyntaxError("malformed permission rule: empty rule")
    if _MCP_NAME.fullmatch(stripped):
        return stripped, None
    if "(" not in stripped:
        if ")" in stripped or not _TOOL_NAME.fullmatch(stripped):
            raise RuleSyntaxError(f"malformed permission rule: {text!r} is not a tool name")
        return stripped, None
    name, _, rest = stripped.partition("(")
    name = name.strip()
    if not rest.endswith(")"):
        raise RuleSyntaxError(f"malformed permission rule (missing ')'): {text!r}")
    if not _TOOL_NAME.fullmatch(name):
        raise RuleSyntaxError(f"malformed permission rule: {name!r} is not a tool name in {text!r}")
    specifier = rest[:-1]
    if not _balanced(specifier):
        # ``Bash(rm:*))`` is a typo, not a rule about commands ending in ")".
        raise RuleSyntaxError(f"malformed permission rule (unbalanced parentheses): {text!r}")
    return name, specifier


def _balanced(text: str) -> bool:
    """Whether parentheses outside quotes and backslash escapes are balanced."""
    depth = 0
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quote != "'":
            i += 2
            continue
        if quote is not None:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
        i += 1
    return depth == 0


def parse_rule(text: str, *, behavior: RuleBehavior, origin: RuleOrigin) -> Rule:
    """Parse one rule string. Raises :class:`RuleSyntaxError` (naming the rule) for text that
    is not rule grammar or a specifier the tool does not understand."""
    name, specifier = split_rule(text)
    close = _case_variant(name)
    if close is not None:
        raise RuleSyntaxError(
            f"malformed permission rule {text.strip()!r}: tool names are case-sensitive and "
            f"{name!r} is not one (did you mean {close}?)"
        )
    base = dict(text=text.strip(), tool=name, behavior=behavior, origin=origin)
    if name.startswith("mcp__"):
        if specifier is not None:
            raise RuleSyntaxError(f"MCP rules take no parentheses: {text!r}")
        parts = name.split("__")
        if len(parts) < 2 or not parts[1] or (len(parts) > 2 and not parts[2]):
            raise RuleSyntaxError(
                f"malformed MCP rule {text!r}: use mcp__server or mcp__server__tool"
            )
        return Rule(**base, specifier=None, kind="mcp")  # type: ignore[arg-type]
    if specifier is not None and specifier.strip() in ("", "*"):
        if specifier.strip() == "":
            raise RuleSyntaxError(f"empty specifier in {text!r}: write {name} for every call")
        specifier = None
    if specifier is None:
        return Rule(**base, specifier=None, kind="tool")  # type: ignore[arg-type]
    if name == "Bash":
        return _bash_rule(base, specifier, text)
    if name in PATH_RULE_TOOLS:
        return _path_rule(base, specifier, text, origin)
    if name == "WebFetch":
        if not specifier.startswith("domain:"):
            raise RuleSyntaxError(
                f"WebFetch rules look like WebFetch(domain:example.com): {text!r}"
            )
        host = specifier[len("domain:") :].strip().lower().rstrip(".")
        if not _HOST.fullmatch(host):
            raise RuleSyntaxError(f"not a host name in {text!r}")
        return Rule(**base, specifier=specifier, kind="domain", host=host)  # type: ignore[arg-type]
    if name in NAME_SPECIFIER_TOOLS:
        return Rule(**base, specifier=specifier.strip(), kind="name")  # type: ignore[arg-type]
    raise RuleSyntaxError(f"{name} rules take no specifier (unknown rule syntax): {text!r}")


def _bash_rule(base: dict[str, Any], specifier: str, text: str) -> Rule:
    spec = specifier.strip()
    if "\n" in spec or "\r" in spec:
        raise RuleSyntaxError(f"Bash rules are one line: {text!r}")
    if spec.endswith(":*"):
        prefix = spec[:-2]
        if "*" in prefix:
            raise RuleSyntaxError(f"a ':*' prefix rule cannot contain another '*': {text!r}")
        words = _words(prefix, text)
        if not words:
            raise RuleSyntaxError(f"empty command prefix in {text!r}")
        return Rule(**base, specifier=spec, kind="bash_prefix", words=words)
    if "*" in spec:
        return Rule(**base, specifier=spec, kind="bash_wildcard", regex=_wildcard(spec))
    words = _words(spec, text)
    return Rule(**base, specifier=spec, kind="bash_exact", words=words)


def _words(spec: str, text: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(spec))
    except ValueError as exc:
        raise RuleSyntaxError(f"cannot split the command in {text!r}: {exc}") from None


def _wildcard(spec: str) -> re.Pattern[str]:
    normal = " ".join(spec.split())
    pieces = normal.split("*")
    if len(pieces) == 2 and normal.endswith(" *"):
        # Claude Code: a single trailing " *" also matches the bare command ("ls *" ~ "ls").
        return re.compile(re.escape(pieces[0][:-1]) + r"(?: .*)?", re.DOTALL)
    return re.compile(".*".join(re.escape(p) for p in pieces), re.DOTALL)


def _path_rule(base: dict[str, Any], specifier: str, text: str, origin: RuleOrigin) -> Rule:
    spec = specifier.strip()
    if "\x00" in spec or "\n" in spec:
        raise RuleSyntaxError(f"invalid path pattern in {text!r}")
    if spec.startswith("//"):
        root, pattern = Path("/"), "/" + spec[2:].lstrip("/")
    elif spec == "~" or spec.startswith("~/"):
        root, pattern = origin.home, "/" + spec[2:] if len(spec) > 1 else "/**"
    elif spec.startswith("~"):
        raise RuleSyntaxError(f"~user paths are not supported in {text!r}; use //absolute/path")
    elif spec.startswith("/"):
        root, pattern = origin.settings_root, spec
    elif spec.startswith("./"):
        root, pattern = origin.cwd, "/" + spec[2:]
    else:
        root, pattern = origin.cwd, spec
    if pattern in ("/", ""):
        pattern = "/**"
    if not _PLAIN_PATH_PATTERN.fullmatch(pattern):
        import pathspec  # only settings with path rules need it

        try:  # compiled here only to report a bad pattern now; Rule.path_spec compiles it again
            pathspec.GitIgnoreSpec.from_lines([pattern])
        except Exception as exc:  # pathspec raises several error types for bad patterns
            raise RuleSyntaxError(f"invalid gitignore pattern in {text!r}: {exc}") from None
    return Rule(**base, specifier=spec, kind="path", path_base=root, path_pattern=pattern)


_PLAIN_PATH_PATTERN = re.compile(
    r"(?:/(?![.]{1,2}(?:/|$))"  # each segment: not . or ..,
    r"[^/*?\[\]\\!#\s](?:[^/*?\[\]\\]*[^/*?\[\]\\\s])?)+"  # no glob/escape, no edge space
    r"(?:/\*\*)?"
)
"""An anchored literal path, optionally with a trailing ``/**`` (a session's own results folder):
no wildcard, class, escape, negation, comment or edge-whitespace, no ``.``/``..`` segment —
gitignore syntax such a pattern cannot get wrong, so it is not compiled to be checked."""


def parse_rules(
    texts: Sequence[str], *, behavior: RuleBehavior = "allow", origin: RuleOrigin | None = None
) -> tuple[Rule, ...]:
    """Parse rule strings (blank ones skipped); raises :class:`RuleSyntaxError` (a
    ``ValueError``) naming the first malformed one. Without ``origin``, relative path
    patterns are relative to the process's working directory."""
    if origin is None:
        here = Path.cwd()
        origin = RuleOrigin(source="cli", settings_root=here, cwd=here, home=Path.home())
    return tuple(parse_rule(t, behavior=behavior, origin=origin) for t in texts if t.strip())


def _case_variant(name: str) -> str | None:
    """The known tool ``name`` spells with a different case or width (``bash`` → ``Bash``)."""
    if name in KNOWN_TOOLS or name.startswith("mcp__"):
        return None
    if fold(name).startswith("mcp__"):
        return "mcp__" + name[len("mcp__") :]
    return next((k for k in sorted(KNOWN_TOOLS) if fold(k) == fold(name)), None)


def unknown_tool_warning(rule: Rule) -> str | None:
    """A warning for a rule naming a tool nobody knows (probably a typo), or ``None``. (A
    known tool spelt with another case is a :class:`RuleSyntaxError` in :func:`parse_rule`.)"""
    if rule.kind == "mcp" or rule.tool in KNOWN_TOOLS:
        return None
    return f"{rule.tool!r} is not a known tool name; the rule {rule.text!r} matches nothing"


def quote_words(words: Sequence[str]) -> str:
    """Words joined into rule text, quoted only where needed (for suggested rules)."""
    return " ".join(
        w if re.fullmatch(r"[A-Za-z0-9_./:=@%+,-]+", w) else shlex.quote(w) for w in words
    )
