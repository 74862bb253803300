"""The hook-output rule: every JSON object a PreToolUse hook prints counts; any deny denies
(whatever the mode, allow rules or exit code); malformed or conflicting JSON asks; other lines
are noise, logged and shown to the user."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.unit.hooks.test_hooks import Harness, runner, script

DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "no writes today",
    }
}
ALLOW = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = (tmp_path / "proj").resolve()
    r.mkdir()
    return r


def printer(tmp_path: Path, text: str, *, code: int = 0) -> str:
    """A hook that prints ``text`` verbatim and exits with ``code``."""
    return script(tmp_path, "printer", f"sys.stdout.write({text!r}); sys.exit({code})\n")


@pytest.mark.parametrize(
    ("mode", "rules"),
    [("bypassPermissions", ()), ("default", (("allow", "Bash(touch:*)"),))],
)
async def test_a_deny_after_another_object_denies_in_bypass_and_with_an_allow_rule(
    root: Path, tmp_path: Path, mode: str, rules: tuple[tuple[str, str], ...]
) -> None:
    # Before the rule, the two lines were "invalid JSON", ignored, and the tool ran.
    text = json.dumps({"continue": True}) + "\n" + json.dumps(DENY) + "\n"
    h = Harness(root, runner(root, "PreToolUse", printer(tmp_path, text)), rules=rules, mode=mode)
    result = await h.bash(f"touch {root / 'sentinel'}")
    assert result.is_error and "no writes today" in str(result.content)
    assert not (root / "sentinel").exists() and h.requests == []


async def test_noise_lines_are_ignored_logged_and_shown(
    root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="lsp_agent.hooks.runner")
    text = "Welcome to my shell!\n" + json.dumps(DENY) + "\nbye\n"
    hooks = runner(root, "PreToolUse", printer(tmp_path, text))
    outcome = await hooks.pre_tool_use(
        tool_name="Bash", tool_input={"command": "x"}, tool_use_id="t", permission_mode="default"
    )
    assert outcome.block and outcome.permission == "deny"
    assert any("Welcome to my shell!" in m for m in outcome.messages), outcome.messages
    assert "Welcome to my shell!" in caplog.text


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(ALLOW) + '\n{"hookSpecificOutput": {"permissionDecision": "deny"\n',
        json.dumps(ALLOW) + "\n[1, 2]\n",
        "note: " + json.dumps(DENY).replace("deny", "ask") + "\n" + json.dumps(ALLOW),
        "{not json at all\n",
    ],
    ids=["truncated-object", "array", "object-behind-a-prefix", "not-json"],
)
async def test_malformed_json_asks_even_next_to_an_allow(
    root: Path, tmp_path: Path, text: str
) -> None:
    h = Harness(
        root,
        runner(root, "PreToolUse", printer(tmp_path, text)),
        mode="bypassPermissions",
        answer="reject_once",
    )
    result = await h.bash(f"touch {root / 'sentinel'}")
    assert len(h.requests) == 1, "the user must be asked"
    assert result.is_error and not (root / "sentinel").exists()


async def test_conflicting_objects_ask_and_their_rewrites_are_dropped(
    root: Path, tmp_path: Path
) -> None:
    first = {
        "hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "ls"}}
    }
    second = {"hookSpecificOutput": {"updatedInput": {"command": "pwd"}}}
    text = json.dumps(first) + "\n" + json.dumps(second) + "\n"
    hooks = runner(root, "PreToolUse", printer(tmp_path, text))
    outcome = await hooks.pre_tool_use(
        tool_name="Bash", tool_input={"command": "x"}, tool_use_id="t", permission_mode="default"
    )
    assert outcome.permission == "ask" and outcome.updated_input is None
    assert any("disagree on hookSpecificOutput.updatedInput" in e for e in outcome.errors)
    h = Harness(root, hooks, mode="bypassPermissions")
    result = await h.bash(f"touch {root / 'sentinel'}")
    assert len(h.requests) == 1 and result.is_error and not (root / "sentinel").exists()


async def test_a_failing_hook_that_prints_a_deny_still_denies(root: Path, tmp_path: Path) -> None:
    h = Harness(
        root,
        runner(root, "PreToolUse", printer(tmp_path, json.dumps(DENY), code=1)),
        mode="bypassPermissions",
    )
    result = await h.bash(f"touch {root / 'sentinel'}")
    assert result.is_error and "no writes today" in str(result.content)
    assert not (root / "sentinel").exists()


async def test_one_pretty_printed_object_is_one_answer(root: Path, tmp_path: Path) -> None:
    h = Harness(root, runner(root, "PreToolUse", printer(tmp_path, json.dumps(ALLOW, indent=2))))
    result = await h.bash(f"touch {root / 'sentinel'}")
    assert not result.is_error and (root / "sentinel").exists() and h.requests == []


def test_parse_stdout_parts() -> None:
    from lsp_agent.hooks.output import conflicts, parse_stdout

    parts = parse_stdout('hello\n{"a": 1}\n\n{\n "b": [1,\n 2]\n}\n{"c": \nworld {"d"}\n')
    assert parts.objects == ({"a": 1}, {"b": [1, 2]})
    assert parts.malformed == ('{"c":', 'world {"d"}')
    assert parts.noise == ("hello",)
    assert parse_stdout(json.dumps({"x": 1}, indent=4)).plain
    assert parse_stdout("42").noise == ("42",) and parse_stdout("[1]").malformed == ("[1]",)
    assert parse_stdout("{" * 5000 + "}" * 5000).malformed  # deep nesting does not raise
    assert conflicts([{"continue": True}, {"continue": False}]) == ["continue"]
    assert conflicts([{"continue": True}, DENY]) == []
