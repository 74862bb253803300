"""Path rules compile their gitignore pattern on first match; a plain path skips the check and
is matched without ``pathspec``, as ``pathspec`` would match it."""

from __future__ import annotations

import itertools
from pathlib import Path

import pathspec
import pytest

from lsp_agent.permissions.rules import RuleOrigin, RuleSyntaxError, parse_rule

ORIGIN = RuleOrigin(source="cli", settings_root=Path("/p"), cwd=Path("/p"), home=Path("/h"))

PATTERNS = [
    "//tmp/state/sessions/abc/**",
    "//home/u/My Projects/x/**",
    "//etc/hosts",
    "//a/.git/**",
    "//a/./b",
    "//a/../b/**",
    "src/**",
    "*.py",
    "//a/[bc]/**",
    "//a/b /**",
    "~/notes/**",
    "/docs/**",
]
PATHS = [
    "/tmp/state/sessions/abc/tool-results/1.txt",
    "/tmp/state/sessions/abcd/x",
    "/home/u/My Projects/x/y.py",
    "/etc/hosts",
    "/etc/hosts.bak",
    "/a/.git/config",
    "/a/b/c",
    "/a/c/d",
    "/p/src/m.py",
    "/p/deep/n.py",
    "/h/notes/a.md",
    "/p/docs/x.md",
    "/b/x",
]


@pytest.mark.parametrize("specifier", PATTERNS)
def test_lazy_rule_matches_as_its_gitignore_pattern_does(specifier: str) -> None:
    rule = parse_rule(f"Read({specifier})", behavior="deny", origin=ORIGIN)
    assert rule.path_pattern is not None and rule.path_base is not None
    spec = pathspec.GitIgnoreSpec.from_lines([rule.path_pattern])
    for raw in PATHS:
        path = Path(raw)
        try:
            text = path.relative_to(rule.path_base).as_posix()
        except ValueError:
            assert not rule.matches_path(path)
            continue
        expected = spec.match_file(text) or spec.match_file(text + "/")
        assert rule.matches_path(path) is expected, (specifier, raw)


def test_plain_path_rule_matches_its_folder() -> None:
    rule = parse_rule("Read(//tmp/state/sessions/abc/**)", behavior="allow", origin=ORIGIN)
    assert rule.matches_path(Path("/tmp/state/sessions/abc/tool-results/1.txt"))
    assert not rule.matches_path(Path("/tmp/state/sessions/abcd/1.txt"))


@pytest.mark.parametrize("specifier", ["//a/b\\", "src\\"])
def test_bad_pattern_is_still_reported_when_parsed(specifier: str) -> None:
    with pytest.raises(RuleSyntaxError, match="invalid gitignore pattern"):
        parse_rule(f"Read({specifier})", behavior="allow", origin=ORIGIN)


PLAIN_SEGMENTS = ["a", "a.b", "a b", "a!b", "a#b", "{a}", "é", "-a", "a+b", "(a)", "~a", ".git"]
"""Literal path segments a plain pattern may hold (characters gitignore gives no meaning)."""
PATH_SEGMENTS = [*PLAIN_SEGMENTS, "A", "**", "*", "[a]", "!a", "#a", " a", "a ", "a\\b", "x"]
"""Segments of the paths checked: also glob characters, case and edge spaces as literal names."""


def _plain_specifiers() -> list[str]:
    out = []
    for n in (1, 2):
        for combo in itertools.product(PLAIN_SEGMENTS, repeat=n):
            out.append("//" + "/".join(combo))
            out.append("//" + "/".join(combo) + "/**")
    return out


@pytest.mark.parametrize("specifier", _plain_specifiers())
def test_plain_rule_matches_without_pathspec_as_pathspec_does(specifier: str) -> None:
    rule = parse_rule(f"Read({specifier})", behavior="allow", origin=ORIGIN)
    assert rule.plain_path is not None and rule.path_pattern is not None
    spec = pathspec.GitIgnoreSpec.from_lines([rule.path_pattern])
    literal = rule.plain_path[0]
    texts = {literal, literal + "x", literal + "/x", literal.upper(), "z/" + literal}
    for n in (1, 2, 3):
        texts.update("/".join(c) for c in itertools.product(PATH_SEGMENTS[:12], repeat=n))
    texts.update(f"{literal}/{seg}" for seg in PATH_SEGMENTS)
    for text in texts:
        expected = spec.match_file(text) or spec.match_file(text + "/")
        assert rule.matches_path(Path("/" + text)) is expected, (specifier, text)
    assert "path_spec" not in rule.__dict__  # matched without compiling the pattern


@pytest.mark.parametrize(
    "specifier", ["//**", "~/**", "//a/*.py", "//a/[bc]", "src/**", "//a/b /c"]
)
def test_only_literal_patterns_are_plain(specifier: str) -> None:
    rule = parse_rule(f"Read({specifier})", behavior="allow", origin=ORIGIN)
    assert rule.plain_path is None
