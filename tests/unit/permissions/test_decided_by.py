"""What decided a call, as ``--verbose`` prints it: the user's words, not the fields."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.permissions.engine import PermissionEngine


def test_the_log_says_which_rule_or_what_else_decided(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()

    def said(tool: str, *, paths: tuple[Path, ...] = (), **kw: object) -> str:
        engine = PermissionEngine(
            mode="default",
            roots=(root,),
            home=tmp_path / "home",
            **kw,  # type: ignore[arg-type]
        )
        raw = {"command": "make"} if tool == "Bash" else {}
        kind = "read" if tool == "Read" else "execute"
        decision = engine.decide(
            tool=tool, read_only=tool == "Read", kind=kind, paths=paths, raw_input=raw
        )
        return decision.decided_by()

    assert said("Bash") == "no rule matched; default for this mode"
    assert said("Bash", allowed_tools=("Bash(make)",)) == "rule Bash(make)"
    outside = (Path("/etc/passwd"),)
    assert said("Read", paths=outside) == "the workspace's safety checks decided"
