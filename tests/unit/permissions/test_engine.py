"""The permission engine's decisions (the baseline policy; the full corpus is its own suite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.permissions.engine import PermissionEngine, Rule, is_within


def engine(tmp_path: Path, **kw: object) -> PermissionEngine:
    return PermissionEngine(mode=kw.pop("mode", "default"), roots=(tmp_path.resolve(),), **kw)  # type: ignore[arg-type]


def decide(
    e: PermissionEngine,
    tool: str,
    *,
    read_only: bool = False,
    kind: str = "other",
    paths: tuple[Path, ...] = (),
    **raw: object,
) -> str:
    return e.decide(
        tool=tool, read_only=read_only, kind=kind, paths=paths, raw_input=dict(raw)
    ).behavior


def test_read_only_inside_roots_is_allowed_and_outside_asks(tmp_path: Path) -> None:
    e = engine(tmp_path)
    assert decide(e, "Read", read_only=True, kind="read", paths=(tmp_path / "a.py",)) == "allow"
    assert decide(e, "Read", read_only=True, kind="read", paths=(Path("/etc/passwd"),)) == "ask"


def test_sibling_directory_sharing_a_prefix_is_outside(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    sibling = tmp_path / "proj-evil"
    root.mkdir()
    sibling.mkdir()
    assert is_within(root / "x", (root.resolve(),))
    assert not is_within(sibling / "x", (root.resolve(),))
    assert not is_within(root / ".." / "proj-evil" / "x", (root.resolve(),))


def test_symlink_escape_is_outside(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "link").symlink_to("/etc")
    assert not is_within(root / "link" / "passwd", (root.resolve(),))


def test_edits_ask_by_default_and_accept_edits_allows_inside_roots_only(tmp_path: Path) -> None:
    inside = (tmp_path / "a.py",)
    assert decide(engine(tmp_path), "Edit", kind="edit", paths=inside) == "ask"
    e = engine(tmp_path, mode="acceptEdits")
    assert decide(e, "Edit", kind="edit", paths=inside) == "allow"
    assert decide(e, "Edit", kind="edit", paths=(Path("/tmp/elsewhere.py"),)) == "ask"
    assert decide(e, "Bash", kind="execute", command="make") == "ask"


def test_plan_mode_denies_writes_and_bypass_allows(tmp_path: Path) -> None:
    assert decide(engine(tmp_path, mode="plan"), "Bash", command="ls") == "deny"
    assert decide(engine(tmp_path, mode="bypassPermissions"), "Bash", command="rm x") == "allow"


def test_deny_beats_allow(tmp_path: Path) -> None:
    e = engine(tmp_path, allowed_tools=("Bash",), disallowed_tools=("Bash(rm:*)",))
    assert decide(e, "Bash", command="rm -rf x") == "deny"
    assert decide(e, "Bash", command="ls") == "allow"
    e = engine(tmp_path, mode="bypassPermissions", disallowed_tools=("Write",))
    assert decide(e, "Write", kind="edit", paths=(tmp_path / "a",)) == "deny"


@pytest.mark.parametrize(
    ("rule", "command", "matches"),
    [
        ("Bash(npm run test:*)", "npm run test", True),
        ("Bash(npm run test:*)", "npm run test -- -k x", True),
        ("Bash(npm run test:*)", "npm run testing", False),
        ("Bash(npm run test:*)", "npm run test && rm -rf /", False),
        ("Bash(npm run test:*)", "npm run test; rm -rf /", False),
        ("Bash(npm run test:*)", "npm run test > /etc/passwd", False),
        ("Bash(npm run test:*)", "npm run test $(rm -rf /)", False),
        ("Bash(make)", "make", True),
        ("Bash(make)", "make install", False),
        ("Bash", "anything at all", True),
    ],
)
def test_bash_rules_match_whole_words_never_across_compound_commands(
    rule: str, command: str, matches: bool
) -> None:
    assert Rule.parse(rule).matches(tool="Bash", command=command, paths=()) is matches


@pytest.mark.parametrize("bad", ["Bash(", "Bash(x", "Ba sh", "", "Edit)"])
def test_malformed_rules_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError, match="malformed"):
        Rule.parse(bad)


def test_session_rules(tmp_path: Path) -> None:
    e = engine(tmp_path)
    rule = e.remember(tool="Bash", raw_input={"command": "make"}, allow=True)
    assert str(rule) == "Bash(make)"
    assert decide(e, "Bash", command="make") == "allow"
    assert decide(e, "Bash", command="make install") == "ask"
    e.remember(tool="Edit", raw_input={}, allow=False)
    assert decide(e, "Edit", kind="edit", paths=(tmp_path / "a",)) == "deny"
