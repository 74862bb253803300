"""The engine keeps what a decision reads between calls: every change of what it is built from
(mode, session rules, settings policy, roots, additional folders and their links) still decides
the very next call."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.permissions.engine import PermissionEngine
from lsp_agent.permissions.policy import Policy
from lsp_agent.permissions.rules import RuleOrigin, parse_rules


def _engine(tmp_path: Path, **kw: object) -> PermissionEngine:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    return PermissionEngine(
        mode="default",
        roots=(root,),
        home=tmp_path / "home",
        **kw,  # type: ignore[arg-type]
    )


def _edit(e: PermissionEngine, path: Path) -> str:
    return e.decide(tool="Edit", read_only=False, kind="edit", paths=(path,), raw_input={}).behavior


def _read(e: PermissionEngine, path: Path) -> str:
    return e.decide(tool="Read", read_only=True, kind="read", paths=(path,), raw_input={}).behavior


def test_a_mode_change_decides_the_next_call(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    target = e.roots[0] / "a.py"
    assert _edit(e, target) == "ask"
    e.mode = "acceptEdits"
    assert _edit(e, target) == "allow"
    e.mode = "plan"
    assert _edit(e, target) == "deny"
    e.mode = "default"
    assert _edit(e, target) == "ask"


def test_a_remembered_answer_decides_the_next_call(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    target = e.roots[0] / "a.py"
    assert _edit(e, target) == "ask"
    e.remember(tool="Edit", raw_input={}, allow=True, paths=(target,))
    assert _edit(e, target) == "allow"
    e.remember(tool="Edit", raw_input={}, allow=False, rules=["Edit"])
    assert _edit(e, target) == "deny"


def test_a_new_policy_decides_the_next_call(tmp_path: Path) -> None:
    root = tmp_path / "root"
    origin = RuleOrigin(source="user", settings_root=root, cwd=root, home=tmp_path / "home")
    current = [Policy()]
    e = _engine(tmp_path, policy=lambda: current[0])
    target = root / "a.py"
    assert _edit(e, target) == "ask"
    current[0] = Policy(rules=tuple(parse_rules(["Edit"], behavior="allow", origin=origin)))
    assert _edit(e, target) == "allow"
    current[0] = Policy(rules=tuple(parse_rules(["Edit"], behavior="deny", origin=origin)))
    assert _edit(e, target) == "deny"
    current[0] = Policy()
    assert _edit(e, target) == "ask"


def test_additional_folders_follow_their_links_at_every_call(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    link = tmp_path / "extra"
    link.symlink_to(tmp_path / "one")
    policy = Policy(additional_roots=(link,))
    e = _engine(tmp_path, policy=lambda: policy)
    assert _read(e, tmp_path / "one" / "f.py") == "allow"
    assert _read(e, tmp_path / "two" / "f.py") == "ask"
    link.unlink()
    link.symlink_to(tmp_path / "two")
    assert _read(e, tmp_path / "one" / "f.py") == "ask"
    assert _read(e, tmp_path / "two" / "f.py") == "allow"


def test_changed_roots_decide_the_next_call(tmp_path: Path) -> None:
    e = _engine(tmp_path)
    other = (tmp_path / "other").resolve()
    other.mkdir()
    assert _read(e, other / "f.py") == "ask"
    e.roots = (*e.roots, other)
    assert _read(e, other / "f.py") == "allow"
