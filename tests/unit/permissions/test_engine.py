"""The permission engine's decisions beyond the corpus: rule parsing, session memory,
suggestions, persistence, modes and the write-time re-check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_agent.permissions.engine import PermissionEngine, is_within, parse_rules
from lsp_agent.permissions.paths import UnsafeWriteError, check_write_path
from lsp_agent.permissions.policy import Policy
from lsp_agent.permissions.rules import RuleOrigin, RuleSyntaxError, parse_rule


def engine(tmp_path: Path, **kw: object) -> PermissionEngine:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    return PermissionEngine(
        mode=kw.pop("mode", "default"),  # type: ignore[arg-type]
        roots=(root,),
        home=tmp_path / "home",
        **kw,  # type: ignore[arg-type]
    )


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
    root = e.roots[0]
    assert decide(e, "Read", read_only=True, kind="read", paths=(root / "a.py",)) == "allow"
    assert decide(e, "Read", read_only=True, kind="read", paths=(Path("/etc/passwd"),)) == "ask"


def test_containment_is_by_components(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    sibling = tmp_path / "proj-evil"
    root.mkdir()
    sibling.mkdir()
    (root / "link").symlink_to("/etc")
    assert is_within(root / "x", (root.resolve(),))
    assert not is_within(sibling / "x", (root.resolve(),))
    assert not is_within(root / ".." / "proj-evil" / "x", (root.resolve(),))
    assert not is_within(root / "link" / "passwd", (root.resolve(),))


def test_plan_mode_allows_provably_read_only_commands_only(tmp_path: Path) -> None:
    e = engine(tmp_path, mode="plan")
    assert decide(e, "Bash", command="ls") == "allow"
    assert decide(e, "Bash", command="make") == "deny"
    assert decide(engine(tmp_path, mode="bypassPermissions"), "Bash", command="rm x") == "allow"


def test_dont_ask_mode_denies_what_would_ask_and_keeps_allows(tmp_path: Path) -> None:
    e = engine(tmp_path, mode="dontAsk", allowed_tools=("Bash(make:*)",))
    root = e.roots[0]
    assert decide(e, "Bash", command="ls") == "allow"
    assert decide(e, "Bash", command="make test") == "allow"
    assert decide(e, "Read", read_only=True, kind="read", paths=(root / "a.py",)) == "allow"
    denied = e.decide(
        tool="Bash", read_only=False, kind="execute", paths=(), raw_input={"command": "rm x"}
    )
    assert denied.behavior == "deny" and denied.source == "mode"
    assert denied.reason.startswith("dontAsk mode denies what no rule allows (")
    assert decide(e, "Write", kind="edit", paths=(root / "a",)) == "deny"
    assert decide(e, "Read", read_only=True, kind="read", paths=(Path("/etc/passwd"),)) == "deny"
    # The same calls ask in default mode: the denial is the mode's doing.
    e.mode = "default"
    assert decide(e, "Bash", command="rm x") == "ask"
    assert "dontAsk" in e.available_modes()


def test_disabled_bypass_mode_is_reported_and_treated_as_default(tmp_path: Path) -> None:
    e = engine(tmp_path, mode="bypassPermissions", policy=lambda: Policy(disable_bypass=True))
    assert e.effective_mode() == "default"
    assert "bypassPermissions" not in e.available_modes()
    assert decide(e, "Bash", command="rm x") == "ask"


def test_cli_deny_beats_cli_allow_and_bypass(tmp_path: Path) -> None:
    e = engine(tmp_path, allowed_tools=("Bash",), disallowed_tools=("Bash(rm:*)",))
    assert decide(e, "Bash", command="rm -rf x") == "deny"
    assert decide(e, "Bash", command="make") == "allow"
    e = engine(tmp_path, mode="bypassPermissions", disallowed_tools=("Write",))
    assert decide(e, "Write", kind="edit", paths=(e.roots[0] / "a",)) == "deny"


@pytest.mark.parametrize(
    "bad",
    [
        "Bash(",
        "Bash(x",
        "Ba sh",
        "",
        "Edit)",
        "Bash()",
        "WebFetch(example.com)",
        "WebSearch(x)",
        "Unknown(spec)",
        "mcp__(x)",
        "Read(~user/x)",
        "Bash(a*b:*)",
        # Typos that used to parse as rules matching nothing:
        "Bash(rm:*)) ",
        "Bash(rm:*))",
        "Bash((rm:*)",
        "bash(rm:*)",
        "bash",
        "BASH(rm:*)",
        "edit",
        "MCP__github",
    ],
)
def test_malformed_rules_are_rejected_with_their_text(bad: str) -> None:
    with pytest.raises(RuleSyntaxError) as info:
        parse_rules([bad or " x y "])
    assert isinstance(info.value, ValueError)


def test_parse_rules_skips_blank_lines() -> None:
    assert parse_rules(["", "  "]) == ()
    (rule,) = parse_rules(["Bash(npm run test:*)"])
    assert rule.kind == "bash_prefix" and rule.words == ("npm", "run", "test")


def test_path_rule_forms_resolve_against_their_bases(tmp_path: Path) -> None:
    origin = RuleOrigin(
        source="user",
        settings_root=tmp_path / "settings-root",
        cwd=tmp_path / "cwd",
        home=tmp_path / "home",
    )
    cases = {
        "Read(//etc/hosts)": (Path("/etc/hosts"), True),
        "Read(~/notes/*.md)": (tmp_path / "home" / "notes" / "a.md", True),
        "Read(/docs/**)": (tmp_path / "settings-root" / "docs" / "x" / "y.md", True),
        "Read(./src/*.py)": (tmp_path / "cwd" / "src" / "a.py", True),
        "Read(*.py)": (tmp_path / "cwd" / "deep" / "er" / "a.py", True),
        "Read(src/*.py)": (tmp_path / "cwd" / "deep" / "src" / "a.py", False),
    }
    for text, (path, expected) in cases.items():
        rule = parse_rule(text, behavior="deny", origin=origin)
        assert rule.matches_path(path) is expected, text


def test_session_rules_and_suggestions(tmp_path: Path) -> None:
    e = engine(tmp_path)
    rules = e.remember(tool="Bash", raw_input={"command": "make"}, allow=True)
    assert [r.text for r in rules] == ["Bash(make)"]
    assert decide(e, "Bash", command="make") == "allow"
    assert decide(e, "Bash", command="make install") == "ask"
    assert e.suggest(tool="Bash", raw_input={"command": "git commit -m 'x y'"}) == (
        "Bash(git commit:*)",
    )
    assert e.suggest(tool="Bash", raw_input={"command": "npm run lint -- --fix"}) == (
        "Bash(npm run lint:*)",
    )
    assert e.suggest(tool="Bash", raw_input={"command": "ls && rm -rf build"}) == (
        "Bash(rm -rf build)",
    )
    e.remember(tool="Edit", raw_input={}, allow=False)
    assert decide(e, "Edit", kind="edit", paths=(e.roots[0] / "a",)) == "deny"


def test_suggested_path_rule_covers_exactly_that_file(tmp_path: Path) -> None:
    e = engine(tmp_path)
    target = e.roots[0] / "src" / "a.py"
    decision = e.decide(tool="Edit", read_only=False, kind="edit", paths=(target,), raw_input={})
    assert decision.behavior == "ask" and decision.suggestions == (f"Edit(/{target.as_posix()})",)
    e.remember(tool="Edit", raw_input={}, allow=True, rules=decision.suggestions)
    assert decide(e, "Edit", kind="edit", paths=(target,)) == "allow"
    assert decide(e, "Edit", kind="edit", paths=(target.with_name("b.py"),)) == "ask"


def test_remember_persists_project_and_user_scopes(tmp_path: Path) -> None:
    saved: list[tuple[str, str, list[str]]] = []
    e = engine(
        tmp_path,
        persist=lambda scope, behavior, rules: saved.append((scope, behavior, list(rules))),
    )
    e.remember(tool="Bash", raw_input={"command": "make"}, allow=True, scope="project")
    e.remember(tool="Bash", raw_input={"command": "make clean"}, allow=False, scope="user")
    e.remember(tool="Bash", raw_input={"command": "make all"}, allow=True, scope="session")
    assert saved == [("project", "allow", ["Bash(make)"]), ("user", "deny", ["Bash(make clean)"])]


def test_remember_keeps_session_rule_when_saving_fails(tmp_path: Path) -> None:
    def broken(*_args: object) -> None:
        raise ValueError("settings file is not JSON")

    e = engine(tmp_path, persist=broken)
    e.remember(tool="Bash", raw_input={"command": "make"}, allow=True, scope="project")
    assert decide(e, "Bash", command="make") == "allow"


def test_ask_rules_offer_no_allow_always(tmp_path: Path) -> None:
    origin = RuleOrigin(source="managed", settings_root=Path("/"), cwd=tmp_path, home=tmp_path)
    rule = parse_rule("Bash(make:*)", behavior="ask", origin=origin)
    e = engine(tmp_path, policy=lambda: Policy(rules=(rule,)))
    decision = e.decide(
        tool="Bash", read_only=False, kind="execute", paths=(), raw_input={"command": "make"}
    )
    assert decision.behavior == "ask" and decision.hard and not decision.can_allow_always
    assert decision.source == "managed" and decision.rule == "Bash(make:*)"


def test_broken_policy_provider_fails_closed(tmp_path: Path) -> None:
    def provider() -> Policy:
        raise RuntimeError("boom")

    e = engine(tmp_path, policy=provider)
    # Without a trusted policy git is not provably read-only: it asks instead of allowing.
    assert decide(e, "Bash", command="git status") == "ask"


def test_check_write_path_refuses_moved_paths(tmp_path: Path) -> None:
    root = (tmp_path / "root").resolve()
    outside = (tmp_path / "outside").resolve()
    (root / "dir").mkdir(parents=True)
    outside.mkdir()
    target = root / "dir" / "file.txt"
    check_write_path(target, roots=(root,))
    with pytest.raises(UnsafeWriteError, match="outside"):
        check_write_path(outside / "x", roots=(root,))
    check_write_path(outside / "x", roots=(root,), approved=(outside / "x",))
    with pytest.raises(UnsafeWriteError, match="absolute"):
        check_write_path(Path("rel.txt"))
    # The folder is swapped for a symlink after approval: the write must not follow it.
    (root / "dir").rename(root / "old")
    (root / "dir").symlink_to(outside)
    with pytest.raises(UnsafeWriteError, match="symbolic link"):
        check_write_path(target, roots=(root,))
    (root / "link.txt").symlink_to(outside / "x")
    with pytest.raises(UnsafeWriteError, match="symbolic link"):
        check_write_path(root / "link.txt")


def test_settings_json_shapes_are_stable() -> None:
    # The request carries what the door shows before saving an "always" rule.
    from lsp_agent.protocol.events import ToolCall
    from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse

    request = PermissionRequest(
        tool_call=ToolCall(tool_call_id="t", title="make", kind="execute", status="pending"),
        reason="Bash runs a command",
        suggested_rules=("Bash(make)",),
    )
    wire = request.to_wire()
    assert wire["suggestedRules"] == ["Bash(make)"]
    assert wire["scopes"] == ["session", "project", "user"]
    answer = PermissionResponse.model_validate(
        {"outcome": "selected", "option_id": "allow_always", "scope": "project"}
    )
    assert answer.scope == "project"
    json.dumps(wire)


@pytest.mark.parametrize(
    ("text", "hint"),
    [("bash(rm:*)", "Bash"), ("read(.env)", "Read"), ("webfetch", "WebFetch")],
)
def test_tool_names_are_case_sensitive_with_a_hint(text: str, hint: str) -> None:
    with pytest.raises(RuleSyntaxError, match=f"case-sensitive.*did you mean {hint}"):
        parse_rules([text])


@pytest.mark.parametrize(
    "good", ['Bash(echo "(")', "Bash(echo \\))", "Bash(f (x))", "Read(src/(a)/**)"]
)
def test_quoted_or_balanced_parentheses_are_fine(good: str) -> None:
    (rule,) = parse_rules([good])
    assert rule.tool in ("Bash", "Read")


def kinds(e: PermissionEngine, command: str) -> set[str]:
    decision = e.decide(
        tool="Bash", read_only=False, kind="execute", paths=(), raw_input={"command": command}
    )
    assert decision.behavior == "ask", decision
    return {o.kind for o in decision.prompt_options()}


def test_always_answers_are_offered_only_with_the_rules_they_save(tmp_path: Path) -> None:
    e = engine(tmp_path)
    assert kinds(e, "make") == {"allow_once", "allow_always", "reject_once", "reject_always"}
    # Unanalysable (a carriage return between words): no rule could be shown, so no "always".
    assert kinds(e, "ls\r rm -rf x") == {"allow_once", "reject_once"}
    # A read-only command reading outside the roots has no Bash rule to suggest either; an
    # "always allow" here used to save the bare rule ``Bash`` (every command).
    assert kinds(e, "cat /etc/passwd") == {"allow_once", "reject_once"}
    origin = RuleOrigin(source="managed", settings_root=Path("/"), cwd=tmp_path, home=tmp_path)
    ask = parse_rule("Bash(make:*)", behavior="ask", origin=origin)
    asked = engine(tmp_path, policy=lambda: Policy(rules=(ask,)))
    assert kinds(asked, "make") == {"allow_once", "reject_once", "reject_always"}


def test_remember_never_makes_up_a_tool_wide_rule(tmp_path: Path) -> None:
    saved: list[object] = []
    e = engine(tmp_path, persist=lambda *args: saved.append(args))
    for command in ("ls\r rm -rf x", "cat /etc/passwd"):
        assert e.suggest(tool="Bash", raw_input={"command": command}) == ()
        assert (
            e.remember(tool="Bash", raw_input={"command": command}, allow=False, scope="user") == ()
        )
    assert e.session_rules == [] and saved == []
    assert decide(e, "Bash", command="ls") == "allow"


async def test_an_unanalysable_command_offers_no_always_through_the_executor(
    tmp_path: Path,
) -> None:
    """The request the user sees has no "always" option without suggested rules, and an
    "always reject" sent anyway counts as a plain reject that saves nothing."""
    from lsp_agent.agent.executor import ExecutorEnv, execute_tool_uses
    from lsp_agent.model.types import ToolUseBlock
    from lsp_agent.protocol.permissions import PermissionRequest, PermissionResponse
    from lsp_agent.tools.base import ReadState, ToolContext
    from lsp_agent.tools.registry import default_tools
    from lsp_agent.workspace.disk_host import DiskHost
    from lsp_agent.workspace.workspace import Workspace

    saved: list[object] = []
    e = engine(tmp_path, persist=lambda *args: saved.append(args))
    root = e.roots[0]
    requests: list[PermissionRequest] = []

    async def always_reject(request: PermissionRequest) -> PermissionResponse:
        requests.append(request)
        return PermissionResponse(outcome="selected", option_id="reject_always", scope="user")

    host = DiskHost(permission_handler=always_reject)
    env = ExecutorEnv(
        tools=default_tools(),
        permissions=e,
        ctx=ToolContext(
            session_id="s",
            cwd=root,
            roots=(root,),
            workspace=Workspace(host=host, roots=(root,)),
            read_state=ReadState(),
        ),
    )
    for index, command in enumerate(["touch a\r b", "make -n"]):
        await execute_tool_uses(
            [ToolUseBlock(id=f"t{index}", name="Bash", input={"command": command})],
            env=env,
            results={},
        )
    unanalysable, plain = requests
    assert unanalysable.suggested_rules == ()
    assert {o.kind for o in unanalysable.options} == {"allow_once", "reject_once"}
    assert plain.suggested_rules == ("Bash(make -n)",)
    assert "reject_always" in {o.kind for o in plain.options}
    # Only the rule that was shown was saved.
    assert [r.text for r in e.session_rules] == ["Bash(make -n)"]
    assert saved == [("user", "deny", ["Bash(make -n)"])]
    assert decide(e, "Bash", command="ls") == "allow"


def test_brace_lists_in_argument_position_are_only_more_arguments(tmp_path: Path) -> None:
    e = engine(tmp_path, allowed_tools=("Bash(wc *)",))
    assert decide(e, "Bash", command="wc -l part{1,2,3}.diff") == "allow"
    assert decide(e, "Bash", command="wc -l part{1..3}.diff") == "allow"
    # In command position a brace list chooses the command: still asks.
    assert decide(e, "Bash", command="{wc,rm} -l x") == "ask"
    plain = engine(tmp_path)
    assert decide(plain, "Bash", command="cat src{1,2}.py") == "allow"  # read-only, inside
    assert decide(plain, "Bash", command="cat {/etc/passwd,x}") == "ask"  # reads outside
    assert decide(plain, "Bash", command="cat x{$HOME,y}") == "ask"  # not a plain literal
    bypass = engine(tmp_path, mode="bypassPermissions")
    assert decide(bypass, "Bash", command="cp x .vscode/{a,b}.json") == "ask"
    assert (
        decide(engine(tmp_path, disallowed_tools=("Bash(rm *)",)), "Bash", command="rm x{1,2}")
        == "deny"
    )


def test_a_broken_settings_file_asks_before_changes_only(tmp_path: Path) -> None:
    # Its stand-in ask rules say "every change asks": a read-only command runs as it would
    # with the file fixed; anything else asks, named after the broken file, whatever allows it.
    from lsp_agent.config.settings import fallback_rules

    settings_file = tmp_path / "root" / ".claude" / "settings.json"
    origin = RuleOrigin(
        source="project",
        settings_root=tmp_path / "root",
        cwd=tmp_path / "root",
        home=tmp_path / "home",
        file=settings_file,
    )
    broken = fallback_rules(origin)
    e = engine(
        tmp_path,
        allowed_tools=("Bash(touch:*)",),
        policy=lambda: Policy(rules=broken, disable_bypass=True),
    )
    assert decide(e, "Bash", command="ls") == "allow"
    assert decide(e, "Bash", command="cat a.txt | wc -l") == "allow"
    for command in ("touch z", "ls > listing.txt", "rm -rf x"):
        asked = e.decide(
            tool="Bash", read_only=False, kind="execute", paths=(), raw_input={"command": command}
        )
        assert asked.behavior == "ask" and asked.hard, command
        assert asked.reason.startswith(f"{settings_file} has errors"), asked.reason


def test_dont_ask_reason_has_no_full_stop_inside_its_parenthesis(tmp_path: Path) -> None:
    e = engine(tmp_path, mode="dontAsk")
    denied = e.decide(
        tool="Bash", read_only=False, kind="execute", paths=(), raw_input={"command": "touch z"}
    )
    assert denied.behavior == "deny"
    assert ".)" not in denied.reason and denied.reason.endswith(")"), denied.reason
